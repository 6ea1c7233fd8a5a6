/**
 * One redaction used by the logger and the error base: secrets never reach logs or messages.
 * It recognises API key shapes, bearer tokens, private keys and URL credentials. It sits here,
 * at the bottom floor, so the error base needs nothing above it (docs/decisions/182-folder-floors-checked.md).
 */
const REPLACEMENT = '[redacted]';

const PATTERNS: RegExp[] = [
  // svc gateway secrets and vendor API keys (OpenAI sk-..., Anthropic sk-ant-...)
  /\b(?:svc|sk|sk-ant|sk-proj|xai|gsk|pk)[-_][A-Za-z0-9_-]{16,}/g,
  // Authorization: Bearer <token> / Basic <token>
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  // 32-byte hex private keys (with or without 0x); addresses (20 bytes) are not secrets
  /\b(?:0x)?[0-9a-fA-F]{64}\b/g,
];

/** Replaces every secret-looking substring of `text` with "[redacted]". */
export function redact(text: string): string {
  let out = redactUrlCredentials(text);
  for (const pattern of PATTERNS) {
    out = out.replace(pattern, (_match, scheme: unknown) =>
      typeof scheme === 'string' && /^(bearer|basic)$/i.test(scheme)
        ? `${scheme} ${REPLACEMENT}`
        : REPLACEMENT,
    );
  }
  return out;
}

/** https://user:pass@host -> https://[redacted]@host */
function redactUrlCredentials(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+(?::[^/\s@]*)?@/gi, `$1${REPLACEMENT}@`);
}
