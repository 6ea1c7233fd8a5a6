import { generateKeyPairSync, verify } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { isSvcError } from '../../errors/index.js';
import { type StubServer, startStubServer } from '../testing/httpStub.js';
import { cdpJwt, cdpSigningKey } from './cdpAuth.js';
import {
  CDP_FACILITATOR_URL,
  resolveFacilitator,
  X402_ORG_FACILITATOR_URL,
} from './resolveFacilitator.js';

function decodeJwt(token: string) {
  const [header, claims, signature] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(header!, 'base64url').toString()),
    claims: JSON.parse(Buffer.from(claims!, 'base64url').toString()),
    signingInput: `${header}.${claims}`,
    signature: Buffer.from(signature!, 'base64url'),
  };
}

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

describe('resolveFacilitator', () => {
  let stub: StubServer | undefined;
  afterEach(async () => {
    await stub?.close();
    stub = undefined;
  });

  it('cdp without credentials refuses to start, naming both variables', () => {
    const error = thrown(() => resolveFacilitator('cdp', { env: {} }));
    expect(isSvcError(error)).toBe(true);
    expect(error.message).toContain('FACILITATOR_API_KEY_ID');
    expect(error.message).toContain('FACILITATOR_API_KEY_SECRET');
  });

  it('cdp with only the id names the missing secret', () => {
    const error = thrown(() =>
      resolveFacilitator('cdp', { env: { FACILITATOR_API_KEY_ID: 'id' } }),
    );
    expect(error.message).toContain('FACILITATOR_API_KEY_SECRET');
    expect(error.message).not.toContain('FACILITATOR_API_KEY_ID and');
  });

  it('cdp with a malformed secret refuses to start', () => {
    const error = thrown(() =>
      resolveFacilitator('cdp', {
        env: { FACILITATOR_API_KEY_ID: 'id', FACILITATOR_API_KEY_SECRET: 'nope' },
      }),
    );
    expect(error.message).toContain('FACILITATOR_API_KEY_SECRET');
  });

  it('cdp with credentials points at the CDP facilitator without leaking the secret', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ type: 'sec1', format: 'pem' }).toString();
    const resolved = resolveFacilitator('cdp', {
      env: { FACILITATOR_API_KEY_ID: 'org/key-1', FACILITATOR_API_KEY_SECRET: pem },
    });
    expect(resolved.kind).toBe('cdp');
    expect(resolved.url).toBe(CDP_FACILITATOR_URL);
    expect(resolved.description).not.toContain('PRIVATE');
  });

  it('x402.org needs no credentials', () => {
    const resolved = resolveFacilitator('x402.org', { env: {} });
    expect(resolved.url).toBe(X402_ORG_FACILITATOR_URL);
  });

  it('rejects a value that is neither a preset nor a URL', () => {
    expect(thrown(() => resolveFacilitator('coinbase', { env: {} })).message).toContain(
      'cdp, x402.org, local',
    );
    expect(thrown(() => resolveFacilitator('ftp://x', { env: {} })).message).toContain('http');
  });

  it('a URL facilitator sends SVC_X402_FACILITATOR_AUTHORIZATION as a bearer token', async () => {
    const seen: Array<string | undefined> = [];
    stub = await startStubServer((_path, _body, response, request) => {
      seen.push(request.headers.authorization);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ kinds: [], extensions: [], signers: {} }));
    });
    const resolved = resolveFacilitator(`${stub.url}/`, {
      env: { SVC_X402_FACILITATOR_AUTHORIZATION: 'tok123' },
    });
    expect(resolved.url).toBe(stub.url);
    await resolved.client.getSupported();
    expect(seen).toEqual(['Bearer tok123']);
    expect(resolved.description).not.toContain('tok123');
  });

  it('local points at the local facilitator', () => {
    expect(resolveFacilitator('local', { env: {}, localUrl: 'http://127.0.0.1:9999' }).url).toBe(
      'http://127.0.0.1:9999',
    );
  });
});

describe('CDP JWT', () => {
  it('ES256: header, claims and signature as CDP requires', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ type: 'sec1', format: 'pem' }).toString();
    const key = cdpSigningKey(pem);
    const token = cdpJwt(
      { apiKeyId: 'org/key-1', apiKeySecret: pem },
      key,
      {
        method: 'POST',
        host: 'api.cdp.coinbase.com',
        path: '/platform/v2/x402/settle',
      },
      1_700_000_000,
    );
    const jwt = decodeJwt(token);
    expect(jwt.header).toMatchObject({ alg: 'ES256', kid: 'org/key-1', typ: 'JWT' });
    expect(jwt.header.nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(jwt.claims).toEqual({
      sub: 'org/key-1',
      iss: 'cdp',
      aud: ['cdp_service'],
      uris: ['POST api.cdp.coinbase.com/platform/v2/x402/settle'],
      iat: 1_700_000_000,
      nbf: 1_700_000_000,
      exp: 1_700_000_120,
    });
    expect(
      verify(
        'sha256',
        Buffer.from(jwt.signingInput),
        { key: publicKey, dsaEncoding: 'ieee-p1363' },
        jwt.signature,
      ),
    ).toBe(true);
  });

  it('EdDSA: a base64 64-byte Ed25519 secret signs verifiable tokens', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const jwk = privateKey.export({ format: 'jwk' });
    const secret = Buffer.concat([
      Buffer.from(jwk.d!, 'base64url'),
      Buffer.from(jwk.x!, 'base64url'),
    ]).toString('base64');
    const key = cdpSigningKey(secret);
    expect(key.alg).toBe('EdDSA');
    const jwt = decodeJwt(
      cdpJwt({ apiKeyId: 'k', apiKeySecret: secret }, key, {
        method: 'GET',
        host: 'h',
        path: '/p',
      }),
    );
    expect(jwt.header.alg).toBe('EdDSA');
    expect(verify(null, Buffer.from(jwt.signingInput), publicKey, jwt.signature)).toBe(true);
  });
});
