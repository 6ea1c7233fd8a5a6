import fc from 'fast-check';
import { generatePrivateKey } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { requestHash, responseHash } from './receiptHashes.js';
import { receiptFields, receiptIssuer } from './receipts.js';
import { requestHeadSchema, responseHeadSchema, trailerSchema } from './requestWire.js';
import { quickRequestHead, quickResponseHead, quickTrailer } from './wireChecks.js';

const text: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.constantFrom(
    '',
    '/',
    '/v1/chat/completions',
    'POST',
    'post',
    '12',
    '-1',
    '1.5',
    'x'.repeat(4097),
  ),
);
const number = fc.oneof(
  fc.integer({ min: -10, max: 1000 }),
  fc.constantFrom(0, 99, 100, 599, 600, 1.5, -0, 2 ** 53, Number.MAX_SAFE_INTEGER),
);
const headers = fc.oneof(
  fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })),
  fc.dictionary(
    fc.string({ maxLength: 8 }),
    fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
  ),
  fc.constant({ ['x'.repeat(257)]: 'a' }),
  fc.constant({ a: 'x'.repeat(16 * 1024 + 1) }),
);
const any = fc.oneof(
  text,
  number,
  headers,
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 2 }),
);
/** Mostly valid, sometimes anything. */
const mostly = <T>(valid: fc.Arbitrary<T>, odd: fc.Arbitrary<unknown>) =>
  fc.oneof({ arbitrary: valid, weight: 6 }, { arbitrary: odd, weight: 1 });
const count = fc.oneof(fc.nat(), fc.constantFrom(0, Number.MAX_SAFE_INTEGER));
const usage = fc.record(
  {
    inputTokens: count,
    cachedInputTokens: count,
    outputTokens: count,
    reasoningTokens: mostly(count, number),
    extra: any,
  },
  { requiredKeys: ['inputTokens', 'cachedInputTokens', 'outputTokens'] },
);
const receiptValues = {
  seller: fc.stringMatching(/^0x[0-9a-f]{40}$/),
  buyer: fc.stringMatching(/^0x[0-9a-f]{40}$/),
  serviceId: fc.constantFrom('gpt-paid', '', 'svc-demo-fast', 'ünïcode'),
  requestHash: fc.stringMatching(/^0x[0-9a-f]{64}$/),
  responseHash: fc.stringMatching(/^0x[0-9a-f]{64}$/),
  inputTokens: count,
  cachedInputTokens: count,
  outputTokens: count,
  reasoningTokens: count,
  inputMicroUsdPerMillion: fc.stringMatching(/^(?:0|[1-9]\d{0,29})$/),
  cachedInputMicroUsdPerMillion: fc.constantFrom('0', '1500000'),
  outputMicroUsdPerMillion: fc.constantFrom('0', '20000000'),
  unitMicroUsd: fc.constantFrom('0', '40000'),
  costMicroUsd: fc.stringMatching(/^(?:0|[1-9]\d{0,29})$/),
  timeMs: count,
  signature: fc.stringMatching(/^0x[0-9a-f]{130}$/),
};
/** Odd values for one receipt field: near misses of each pattern, or anything. */
const oddReceiptValue = fc.oneof(
  text,
  any,
  fc.constantFrom(
    `0x${'A'.repeat(40)}`,
    `0x${'0'.repeat(63)}`,
    '0100',
    '1'.repeat(31),
    'x'.repeat(257),
    'gpt\u001b',
    -1,
    1.5,
  ),
);
/** A valid receipt, or now and then one with a field changed, dropped or added. */
const receipt = fc
  .tuple(
    fc.record(receiptValues),
    fc.oneof(
      { arbitrary: fc.constant(null), weight: 4 },
      {
        arbitrary: fc.tuple(fc.constantFrom(...Object.keys(receiptValues)), oddReceiptValue),
        weight: 1,
      },
      { arbitrary: fc.constantFrom(...Object.keys(receiptValues)), weight: 1 },
    ),
  )
  .map(([valid, change]) => {
    const value: Record<string, unknown> = { ...valid };
    if (Array.isArray(change)) value[change[0]] = change[1];
    else if (typeof change === 'string') delete value[change];
    return value;
  });
const fields = {
  method: mostly(fc.constantFrom('POST', 'GET', 'A'.repeat(16)), fc.oneof(text, any)),
  path: mostly(
    fc.constantFrom('/v1/x', '/', '/v1/chat/completions'),
    fc.oneof(text, any, fc.constantFrom('/v1/x\ny', '/\u0000', '/\u007f')),
  ),
  headers: mostly(fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })), headers),
  bodyLength: mostly(count, number),
  payment: mostly(fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue()), any),
  status: mostly(fc.integer({ min: 100, max: 599 }), number),
  usage: mostly(usage, any),
  costMicroUsd: mostly(fc.stringMatching(/^\d{1,30}$/), fc.oneof(text, any)),
  error: mostly(fc.string({ maxLength: 20 }), fc.constantFrom('e'.repeat(4097), 1, null)),
  receipt: mostly(receipt, any),
};
type Field = keyof typeof fields;

/** null most of the time. */
const rarely = <T>(value: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: fc.constant(null), weight: 8 }, { arbitrary: value, weight: 1 });

/** One schema's fields (optional ones sometimes left out), now and then one missing or extra. */
function candidate(required: Field[], optional: Field[] = []) {
  const picked = Object.fromEntries([...required, ...optional].map((key) => [key, fields[key]]));
  return fc
    .tuple(
      fc.record(picked, { requiredKeys: required }),
      rarely(required.length > 0 ? fc.constantFrom(...required) : fc.constant(null)),
      rarely(any),
    )
    .map(([value, missing, extra]) => {
      const object: Record<string, unknown> = { ...value };
      if (missing !== null) delete object[missing];
      if (extra !== null) object.other = extra;
      // Through JSON, as a frame arrives.
      return JSON.parse(JSON.stringify(object)) as unknown;
    });
}

function agrees(
  schema: z.ZodType,
  quick: (value: unknown) => boolean,
  required: Field[],
  optional: Field[] = [],
) {
  let accepted = 0;
  const candidates = candidate(required, optional);
  fc.assert(
    fc.property(fc.oneof(candidates, candidates, candidates, any), (value) => {
      if (!quick(value)) return;
      accepted++;
      const parsed = schema.safeParse(value);
      expect(parsed.success).toBe(true);
      expect(parsed.data).toEqual(value);
    }),
    { numRuns: 3000 },
  );
  // The property is not vacuous: a good share of the candidates are valid frames.
  expect(accepted).toBeGreaterThan(100);
}

describe('quick frame checks accept only what the zod schemas accept', () => {
  it('request head', () =>
    agrees(
      requestHeadSchema,
      quickRequestHead,
      ['method', 'path', 'headers', 'bodyLength'],
      ['payment'],
    ));
  it('response head', () => agrees(responseHeadSchema, quickResponseHead, ['status', 'headers']));
  it('trailer', () =>
    agrees(trailerSchema, quickTrailer, [], ['usage', 'costMicroUsd', 'error', 'receipt']));

  it('accept the frames a buyer and a seller actually send', () => {
    const head = {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      bodyLength: 1000,
      payment: { requestId: 'r1', voucher: { amount: '12' } },
    };
    expect(quickRequestHead(head)).toBe(true);
    expect(
      quickResponseHead({ status: 200, headers: { 'content-type': 'text/event-stream' } }),
    ).toBe(true);
    expect(
      quickTrailer({
        usage: { inputTokens: 250, cachedInputTokens: 0, outputTokens: 1 },
        costMicroUsd: '3',
      }),
    ).toBe(true);
    expect(
      quickTrailer({
        usage: { inputTokens: 5, cachedInputTokens: 0, outputTokens: 900, reasoningTokens: 880 },
      }),
    ).toBe(true);
    expect(quickTrailer({})).toBe(true);
    const claims = {
      usage: { inputTokens: 250, cachedInputTokens: 0, outputTokens: 1 },
      costMicroUsd: '3',
    };
    const receipt = receiptIssuer(generatePrivateKey())(
      receiptFields({
        seller: 'a'.repeat(40),
        buyer: 'b'.repeat(40),
        requestHash: requestHash('POST', '/v1/chat/completions', new Uint8Array(10)),
        responseHash: responseHash(200, new Uint8Array(10)),
        terms: {
          serviceId: 'gpt-4o-mini',
          price: { inputMicroPerMillion: 150_000n, outputMicroPerMillion: 600_000n },
        },
        claims,
        timeMs: Date.now(),
      }),
    );
    expect(quickTrailer(JSON.parse(JSON.stringify({ ...claims, receipt })))).toBe(true);
    expect(quickRequestHead({ ...head, path: '/v1/chat/completions\nx' })).toBe(false);
    expect(requestHeadSchema.safeParse({ ...head, path: '/v1/x\ny' }).success).toBe(false);
    expect(quickResponseHead({ status: 200, headers: {}, extra: 1 })).toBe(false);
    expect(quickRequestHead({ ...head, method: 'post' })).toBe(false);
  });
});
