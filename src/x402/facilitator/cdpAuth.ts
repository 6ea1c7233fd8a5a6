/**
 * Bearer JWTs for the Coinbase CDP facilitator, signed the way CDP's API authentication requires:
 * header {alg, kid: key id, typ: "JWT", nonce}, claims {sub: key id, iss: "cdp",
 * aud: ["cdp_service"], nbf, iat, exp (+120 s), uris: ["<METHOD> <host><path>"]}.
 * The key secret is either an EC private key in PEM (ES256) or a base64 Ed25519 key of 64 bytes
 * (seed + public key, EdDSA). One token per request: the `uris` claim binds it to that call.
 */
import { createPrivateKey, type KeyObject, randomBytes, sign } from 'node:crypto';
import { SvcError } from '../../errors/index.js';

export interface CdpCredentials {
  apiKeyId: string;
  apiKeySecret: string;
}

interface SigningKey {
  alg: 'ES256' | 'EdDSA';
  key: KeyObject;
}

/** Parses the secret once; a secret in neither format refuses to start. */
export function cdpSigningKey(secret: string): SigningKey {
  const text = secret.trim().replace(/\\n/g, '\n');
  if (text.includes('BEGIN')) {
    try {
      const key = createPrivateKey(text);
      if (key.asymmetricKeyType === 'ec') return { alg: 'ES256', key };
    } catch {
      // fall through to the error below
    }
  } else {
    const raw = Buffer.from(text, 'base64');
    if (raw.length === 64) {
      const key = createPrivateKey({
        format: 'jwk',
        key: {
          kty: 'OKP',
          crv: 'Ed25519',
          d: raw.subarray(0, 32).toString('base64url'),
          x: raw.subarray(32).toString('base64url'),
        },
      });
      return { alg: 'EdDSA', key };
    }
  }
  throw new SvcError('invalid_config', {
    message:
      'FACILITATOR_API_KEY_SECRET is neither an EC private key (PEM) nor a base64 Ed25519 key. Copy the secret of a CDP API key as downloaded.',
  });
}

/** One signed token for `<method> <host><path>`. */
export function cdpJwt(
  credentials: CdpCredentials,
  signingKey: SigningKey,
  request: { method: string; host: string; path: string },
  nowSeconds: number = Math.floor(Date.now() / 1000),
): string {
  const header = {
    alg: signingKey.alg,
    kid: credentials.apiKeyId,
    typ: 'JWT',
    nonce: randomBytes(16).toString('hex'),
  };
  const claims = {
    sub: credentials.apiKeyId,
    iss: 'cdp',
    aud: ['cdp_service'],
    uris: [`${request.method} ${request.host}${request.path}`],
    iat: nowSeconds,
    nbf: nowSeconds,
    exp: nowSeconds + 120,
  };
  const signingInput = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  const signature =
    signingKey.alg === 'ES256'
      ? sign('sha256', Buffer.from(signingInput), {
          key: signingKey.key,
          dsaEncoding: 'ieee-p1363',
        })
      : sign(null, Buffer.from(signingInput), signingKey.key);
  return `${signingInput}.${signature.toString('base64url')}`;
}

function base64url(text: string): string {
  return Buffer.from(text).toString('base64url');
}
