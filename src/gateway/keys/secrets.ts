/** Key ids and secrets: `key_<id>`, `svc_<secret>` with 256 random bits, SHA-256 stored. */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

const SECRET_PATTERN = /^svc_[A-Za-z0-9_-]{43}$/;

/** A new key id. */
export function newKeyId(): string {
  return `key_${randomBytes(12).toString('base64url')}`;
}

/** A new secret: 32 random bytes (256 bits), base64url. Shown once, never stored. */
export function newSecret(): string {
  return `svc_${randomBytes(32).toString('base64url')}`;
}

/** The only thing stored about a secret (one-shot SHA-256: no Hash object per request). */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Constant-time equality of two hex hashes. */
export function hashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The secret of an `Authorization: Bearer svc_...` header, or null when malformed. */
export function parseBearer(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  const secret = match?.[1];
  return secret && SECRET_PATTERN.test(secret) ? secret : null;
}
