/**
 * `--x402-facilitator <value>`: a preset (`cdp`, `x402.org`, `local`) or any facilitator base
 * URL. The gateway talks to every one of them through `@x402/core`'s HTTPFacilitatorClient.
 */
import { type FacilitatorConfig, HTTPFacilitatorClient } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import { SvcError } from '../../errors/index.js';
import { cdpJwt, cdpSigningKey } from './cdpAuth.js';

/** Coinbase CDP's hosted facilitator (needs an API key; Base mainnet and Base Sepolia). */
export const CDP_FACILITATOR_URL = 'https://api.cdp.coinbase.com/platform/v2/x402';
/** The x402 Foundation's facilitator: no credentials, free allowance (testnets). */
export const X402_ORG_FACILITATOR_URL = 'https://x402.org/facilitator';
/** Default address of `svc x402 facilitator`. */
export const LOCAL_FACILITATOR_PORT = 8402;
export const LOCAL_FACILITATOR_URL = `http://127.0.0.1:${LOCAL_FACILITATOR_PORT}`;

/** Environment variables the facilitator setting may read. */
export const FACILITATOR_ENV = {
  cdpKeyId: 'FACILITATOR_API_KEY_ID',
  cdpKeySecret: 'FACILITATOR_API_KEY_SECRET',
  authorization: 'SVC_X402_FACILITATOR_AUTHORIZATION',
} as const;

export const FACILITATOR_PRESETS = ['cdp', 'x402.org', 'local'] as const;

/** Default per-call timeout: long enough for a Base block, short enough for an HTTP client. */
export const DEFAULT_FACILITATOR_TIMEOUT_MS = 30_000;

export interface ResolvedFacilitator {
  /** Preset name, or `url`. */
  kind: (typeof FACILITATOR_PRESETS)[number] | 'url';
  url: string;
  client: FacilitatorClient;
  /** One line for logs and `--help`: never contains a secret. */
  description: string;
}

export interface ResolveOptions {
  env: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** Where `local` points (default LOCAL_FACILITATOR_URL). */
  localUrl?: string;
}

/** Resolves the setting; a preset with missing credentials refuses to start naming them. */
export function resolveFacilitator(value: string, options: ResolveOptions): ResolvedFacilitator {
  const timeoutMs = options.timeoutMs ?? DEFAULT_FACILITATOR_TIMEOUT_MS;
  const setting = value.trim();
  if (setting === 'cdp') return cdpFacilitator(options.env, timeoutMs);
  if (setting === 'x402.org') {
    return plain('x402.org', X402_ORG_FACILITATOR_URL, timeoutMs, undefined);
  }
  if (setting === 'local') {
    return plain('local', options.localUrl ?? LOCAL_FACILITATOR_URL, timeoutMs, undefined);
  }
  let url: URL;
  try {
    url = new URL(setting);
  } catch {
    throw new SvcError('invalid_config', {
      message: `--x402-facilitator "${setting}" is neither a preset (${FACILITATOR_PRESETS.join(', ')}) nor a URL like https://facilitator.example.com.`,
    });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new SvcError('invalid_config', {
      message: `--x402-facilitator must be an http(s) URL, not ${url.protocol}`,
    });
  }
  const token = options.env[FACILITATOR_ENV.authorization]?.trim();
  return plain('url', setting.replace(/\/+$/, ''), timeoutMs, token || undefined);
}

function plain(
  kind: ResolvedFacilitator['kind'],
  url: string,
  timeoutMs: number,
  authorization: string | undefined,
): ResolvedFacilitator {
  const config: FacilitatorConfig = { url, timeoutMs };
  if (authorization) {
    // A bare token is sent as a bearer token; a value with a scheme ("Basic ...") as is.
    const header = /\s/.test(authorization) ? authorization : `Bearer ${authorization}`;
    const headers = { Authorization: header };
    config.createAuthHeaders = async () => ({
      verify: headers,
      settle: headers,
      supported: headers,
    });
  }
  const auth = authorization ? ` (authorization from ${FACILITATOR_ENV.authorization})` : '';
  return {
    kind,
    url,
    client: new HTTPFacilitatorClient(config),
    description: `${kind === 'url' ? url : `${kind} (${url})`}${auth}`,
  };
}

function cdpFacilitator(env: NodeJS.ProcessEnv, timeoutMs: number): ResolvedFacilitator {
  const apiKeyId = env[FACILITATOR_ENV.cdpKeyId]?.trim();
  const apiKeySecret = env[FACILITATOR_ENV.cdpKeySecret]?.trim();
  const missing = [
    ...(apiKeyId ? [] : [FACILITATOR_ENV.cdpKeyId]),
    ...(apiKeySecret ? [] : [FACILITATOR_ENV.cdpKeySecret]),
  ];
  if (missing.length > 0 || !apiKeyId || !apiKeySecret) {
    throw new SvcError('invalid_config', {
      message: `--x402-facilitator cdp needs ${missing.join(' and ')} in the environment (a Coinbase CDP API key id and secret).`,
    });
  }
  const credentials = { apiKeyId, apiKeySecret };
  const signingKey = cdpSigningKey(apiKeySecret);
  const base = new URL(CDP_FACILITATOR_URL);
  const headersFor = (method: string, path: string) => ({
    Authorization: `Bearer ${cdpJwt(credentials, signingKey, { method, host: base.host, path: `${base.pathname}/${path}` })}`,
  });
  const client = new HTTPFacilitatorClient({
    url: CDP_FACILITATOR_URL,
    timeoutMs,
    createAuthHeaders: async () => ({
      verify: headersFor('POST', 'verify'),
      settle: headersFor('POST', 'settle'),
      supported: headersFor('GET', 'supported'),
    }),
  });
  return {
    kind: 'cdp',
    url: CDP_FACILITATOR_URL,
    client,
    description: `cdp (${CDP_FACILITATOR_URL}, key ${apiKeyId})`,
  };
}
