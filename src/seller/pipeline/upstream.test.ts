import { describe, expect, it } from 'vitest';
import type { InboundRequest } from '../../network/index.js';
import { readBody, type SellerRoute } from './route.js';
import { upstreamPayload } from './upstream.js';

const encoder = new TextEncoder();

/** A request as the buyer sent it: spacing, key order and escapes a re-encoding would change. */
function inbound(text: string): InboundRequest {
  return {
    peerId: '16Uiu2HAm-test',
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json' },
    body: encoder.encode(text),
    signal: new AbortController().signal,
  };
}

function routeTo(model: string, upstreamModel?: string): SellerRoute {
  return {
    model,
    service: { categories: [], ...(upstreamModel ? { upstreamModel } : {}) },
    protocol: 'openai-chat-completions',
  } as Pick<SellerRoute, 'model' | 'service' | 'protocol'> as SellerRoute;
}

const TEXT = '{ "messages": [{"role":"user","content":"caf\\u00e9"}],\n  "model": "gpt-4o" }';

describe('the body sent upstream', () => {
  it('is the buyer bytes, unchanged, when neither the model nor any field changes', () => {
    const request = inbound(TEXT);
    const payload = upstreamPayload(request, readBody(request), routeTo('gpt-4o'));
    expect(Buffer.from(payload).toString('utf8')).toBe(TEXT);
  });

  it('is re-encoded with the upstream model when the service names one', () => {
    const request = inbound(TEXT);
    const payload = upstreamPayload(request, readBody(request), routeTo('gpt-4o', 'gpt-4o-2024'));
    expect(JSON.parse(String(payload))).toEqual({
      messages: [{ role: 'user', content: 'café' }],
      model: 'gpt-4o-2024',
    });
  });

  it('is re-encoded with the fields the seller adds', () => {
    const request = inbound(TEXT);
    const payload = upstreamPayload(request, readBody(request), routeTo('gpt-4o'), {
      stream_options: { include_usage: true },
    });
    expect(JSON.parse(String(payload))).toMatchObject({
      model: 'gpt-4o',
      stream_options: { include_usage: true },
    });
  });
});
