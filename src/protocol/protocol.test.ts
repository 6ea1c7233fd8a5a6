import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeControlHeaders,
  decodeSellerHeaders,
  decodeUsageHeaders,
  encodeControlHeaders,
  encodeSellerHeaders,
  encodeUsageHeaders,
  SVC_HEADER,
  SVC_HEADER_PREFIX,
} from './headers.js';
import {
  decodeRoutingPolicy,
  encodeRoutingPolicy,
  type RoutingPolicyWire,
} from './routingPolicy.js';
import { decodeUsageComment, encodeUsageComment, type UsageComment } from './usageComment.js';

const text = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() === s && s !== '');
const count = fc.nat({ max: 1_000_000_000 });

describe('x-svc headers', () => {
  it('every name carries the prefix and is lower case', () => {
    for (const name of Object.values(SVC_HEADER)) {
      expect(name.startsWith(SVC_HEADER_PREFIX)).toBe(true);
      expect(name).toBe(name.toLowerCase());
    }
    expect(new Set(Object.values(SVC_HEADER)).size).toBe(Object.values(SVC_HEADER).length);
  });

  it('control headers round-trip', () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            buyerIdentity: text,
            gatewayAuth: text,
            requestId: text,
            routingPolicy: text,
            maxCostUsd: text,
          },
          { requiredKeys: ['buyerIdentity', 'gatewayAuth'] },
        ),
        (control) => {
          expect(decodeControlHeaders(encodeControlHeaders(control))).toEqual(control);
        },
      ),
    );
  });

  it('seller headers round-trip', () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            requestId: text,
            peerId: text,
            provider: text,
            service: text,
            inputUsdPerMillion: text,
            imageUsd: text,
            peerReputation: text,
            attempts: text,
          },
          { requiredKeys: ['requestId', 'peerId', 'provider', 'service', 'attempts'] },
        ),
        (seller) => {
          expect(decodeSellerHeaders(encodeSellerHeaders(seller))).toEqual(seller);
        },
      ),
    );
  });

  it('usage headers round-trip, with the total derived', () => {
    fc.assert(
      fc.property(count, count, count, (inputTokens, cachedInputTokens, outputTokens) => {
        const usage = {
          inputTokens,
          cachedInputTokens,
          outputTokens,
          tokenSource: 'usage',
          estimatedCostUsd: '0.000123',
        };
        const encoded = encodeUsageHeaders(usage);
        expect(encoded[SVC_HEADER.totalTokens]).toBe(String(inputTokens + outputTokens));
        expect(decodeUsageHeaders(encoded)).toEqual(usage);
      }),
    );
    expect(decodeUsageHeaders({})).toBeNull();
  });
});

describe('x-svc-routing-policy', () => {
  const usd = fc.double({ min: 0, max: 1000, noNaN: true });
  const policy: fc.Arbitrary<RoutingPolicyWire> = fc.record(
    {
      minTrustScore: fc.integer({ min: 0, max: 100 }),
      maxPricing: fc.record(
        { inputUsdPerMillion: usd, outputUsdPerMillion: usd, imageUsd: usd },
        { requiredKeys: [] },
      ),
      allowedPeerIds: fc.array(fc.stringMatching(/^[0-9a-f]{40}$/), { maxLength: 3 }),
      blockedPeerIds: fc.array(fc.stringMatching(/^[0-9a-f]{40}$/), { maxLength: 3 }),
      preferFreeSellers: fc.boolean(),
      allowedModels: fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 }),
    },
    { requiredKeys: [] },
  );

  it('round-trips', () => {
    fc.assert(
      fc.property(policy, (p) => {
        expect(decodeRoutingPolicy(encodeRoutingPolicy(p))).toEqual(p);
      }),
    );
  });

  it('refuses a malformed value with invalid_request', () => {
    expect(() => decodeRoutingPolicy('not base64 json')).toThrow(
      expect.objectContaining({ code: 'invalid_request' }),
    );
    const wrongShape = Buffer.from(JSON.stringify({ minTrustScore: 'high' })).toString('base64url');
    expect(() => decodeRoutingPolicy(wrongShape)).toThrow(
      expect.objectContaining({ code: 'invalid_request' }),
    );
  });
});

describe(': svc-usage comment', () => {
  const comment: fc.Arbitrary<UsageComment> = fc.record(
    {
      inputTokens: count,
      cachedInputTokens: count,
      outputTokens: count,
      costUsd: fc.constantFrom('0.000000', '0.000043', '12.345678'),
      errorCode: fc.constantFrom('seller_error', 'seller_timeout'),
    },
    { requiredKeys: ['inputTokens', 'cachedInputTokens', 'outputTokens', 'costUsd'] },
  );

  it('round-trips as one SSE comment line', () => {
    fc.assert(
      fc.property(comment, (c) => {
        const encoded = encodeUsageComment(c);
        expect(encoded.endsWith('\n\n')).toBe(true);
        expect(decodeUsageComment(encoded.trimEnd())).toEqual(c);
      }),
    );
  });

  it('keeps the field order clients of earlier versions read', () => {
    expect(
      encodeUsageComment({
        inputTokens: 9,
        cachedInputTokens: 0,
        outputTokens: 2,
        costUsd: '0.000043',
      }),
    ).toBe(
      ': svc-usage {"inputTokens":9,"cachedInputTokens":0,"outputTokens":2,"costUsd":"0.000043"}\n\n',
    );
  });

  it('is null for other lines and malformed comments', () => {
    expect(decodeUsageComment('data: {}')).toBeNull();
    expect(decodeUsageComment(': svc-usage {"inputTokens":-1}')).toBeNull();
  });
});
