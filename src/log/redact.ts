/** Secret headers for logs; the text redaction itself is the error base's (src/errors/redact.ts). */
import { redact } from '../errors/index.js';
import { SVC_HEADER } from '../protocol/headers.js';

const REPLACEMENT = '[redacted]';

/** Header names whose values are always secret. */
export const SECRET_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'cookie',
  'set-cookie',
  SVC_HEADER.gatewayAuth,
  'payment-signature',
]);

/** A copy of `headers` safe to log: secret headers replaced, other values redacted. */
export function redactHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : value;
    out[name] = SECRET_HEADERS.has(name.toLowerCase()) ? REPLACEMENT : redact(text);
  }
  return out;
}
