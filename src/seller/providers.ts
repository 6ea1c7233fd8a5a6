/**
 * Declarative provider kinds (STYLE 5): the API paths each type relays (the allow-list), the
 * API format of each path, the default upstream root and how the upstream key is applied.
 * `baseUrl` is the API root including its version segment, as the vendors' SDKs take it
 * (e.g. https://api.openai.com/v1); a buyer path `/v1/x` goes to `<baseUrl>/x`.
 */
import type { ProviderConfig } from '../config/index.js';
import type { ApiProtocol } from '../network/index.js';

export type ProviderType = ProviderConfig['type'];

export interface ProviderKind {
  /** Buyer-side API path (POST) to the format it carries. */
  paths: Record<string, ApiProtocol>;
  defaultBaseUrl?: string;
  /** Headers carrying the upstream key. */
  auth(key: string): Record<string, string>;
  /** Headers the upstream needs even when the buyer did not send them. */
  defaults?: Record<string, string>;
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

export const PROVIDER_KINDS: Record<ProviderType, ProviderKind> = {
  'openai-chat': {
    paths: { '/v1/chat/completions': 'openai-chat-completions' },
    defaultBaseUrl: 'https://api.openai.com/v1',
    auth: bearer,
  },
  'openai-responses': {
    paths: { '/v1/responses': 'openai-responses' },
    defaultBaseUrl: 'https://api.openai.com/v1',
    auth: bearer,
  },
  'anthropic-messages': {
    paths: { '/v1/messages': 'anthropic-messages' },
    defaultBaseUrl: 'https://api.anthropic.com/v1',
    auth: (key) => ({ 'x-api-key': key }),
    defaults: { 'anthropic-version': '2023-06-01' },
  },
  'openai-images': {
    paths: { '/v1/images/generations': 'openai-images', '/v1/images/edits': 'openai-images' },
    defaultBaseUrl: 'https://api.openai.com/v1',
    auth: bearer,
  },
  // --- media: video jobs (both formats) and decision models (demo answers without a baseUrl) ---
  video: {
    paths: {
      '/api/v1/video/queue': 'video-queue',
      '/api/v1/video/retrieve': 'video-queue',
      '/fal/v1/video/queue': 'fal-video',
      '/fal/v1/video/retrieve': 'fal-video',
    },
    auth: bearer,
  },
  systemone: {
    paths: { '/v1/systemone': 'systemone' },
    auth: bearer,
  },
  demo: {
    paths: {
      '/v1/chat/completions': 'openai-chat-completions',
      '/v1/responses': 'openai-responses',
      '/v1/messages': 'anthropic-messages',
    },
    auth: () => ({}),
  },
};

/** The formats a provider type serves. */
export function protocolsOf(type: ProviderType): ApiProtocol[] {
  return [...new Set(Object.values(PROVIDER_KINDS[type].paths))];
}

/** Request headers a buyer may pass to the upstream; everything else (auth, cookies, x-svc-*) is dropped. */
const FORWARDED_REQUEST_HEADERS = new Set([
  'content-type',
  'accept',
  'anthropic-version',
  'anthropic-beta',
  'openai-beta',
  'idempotency-key',
]);

/** Upstream response headers passed back to the buyer. */
const FORWARDED_RESPONSE_HEADERS = new Set([
  'content-type',
  'retry-after',
  'x-request-id',
  'request-id',
  'openai-processing-ms',
]);

export function forwardableRequestHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (FORWARDED_REQUEST_HEADERS.has(lower)) out[lower] = value;
  }
  return out;
}

export function forwardableResponseHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value !== undefined && FORWARDED_RESPONSE_HEADERS.has(lower)) {
      out[lower] = Array.isArray(value) ? value.join(', ') : value;
    }
  }
  return out;
}
