import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeModelName } from '../../catalog/index.js';
import { decodeRoutingPolicy } from '../../protocol/index.js';
import { encodeBuyerPolicy, mergePolicies, modelRefusal, narrow } from './mergePolicies.js';
import type { RoutingPolicy } from './types.js';

const peer = fc.constantFrom(...['a', 'b', 'c', 'd'].map((c) => c.repeat(40)));
/** Spellings of three models: routing reads `M1` and `vendor/m1` as `m1`. */
const model = fc.constantFrom('m1', 'M1', 'vendor/m1', 'm2', 'm3');
const price = fc.integer({ min: 0, max: 100 });
const policyArb: fc.Arbitrary<RoutingPolicy> = fc.record(
  {
    allowedPeerIds: fc.uniqueArray(peer),
    blockedPeerIds: fc.uniqueArray(peer),
    minTrustScore: fc.integer({ min: 0, max: 100 }),
    maxPricing: fc.record(
      { inputUsdPerMillion: price, outputUsdPerMillion: price },
      { requiredKeys: [] },
    ),
    allowedModels: fc.uniqueArray(model),
  },
  { requiredKeys: [] },
);

/** Does `policy` admit an offer from `peerId` for `name` at these prices and trust? */
function admits(
  policy: RoutingPolicy,
  o: { peerId: string; name: string; trust: number; input: number; output: number },
): boolean {
  if (policy.allowedPeerIds && !policy.allowedPeerIds.includes(o.peerId)) return false;
  if (policy.blockedPeerIds?.includes(o.peerId)) return false;
  if (policy.minTrustScore !== undefined && o.trust < policy.minTrustScore) return false;
  if (
    policy.maxPricing?.inputUsdPerMillion !== undefined &&
    o.input > policy.maxPricing.inputUsdPerMillion
  )
    return false;
  if (
    policy.maxPricing?.outputUsdPerMillion !== undefined &&
    o.output > policy.maxPricing.outputUsdPerMillion
  )
    return false;
  const name = normalizeModelName(o.name);
  if (policy.allowedModels && !policy.allowedModels.some((m) => normalizeModelName(m) === name))
    return false;
  return true;
}

const offer = fc.record({
  peerId: peer,
  name: model,
  trust: fc.integer({ min: 0, max: 100 }),
  input: price,
  output: price,
});

describe('policy narrowing', () => {
  it('admits an offer exactly when every level admits it (property)', () => {
    fc.assert(
      fc.property(fc.array(policyArb, { maxLength: 4 }), offer, (levels, o) => {
        const merged = mergePolicies(levels);
        expect(admits(merged, o)).toBe(levels.every((level) => admits(level, o)));
      }),
      { numRuns: 500 },
    );
  });

  it('intersects allow lists, adds blocks, takes the highest minimum and lowest caps', () => {
    const merged = narrow(
      {
        allowedPeerIds: ['a'.repeat(40), 'b'.repeat(40)],
        blockedPeerIds: ['c'.repeat(40)],
        minTrustScore: 70,
        maxPricing: { inputUsdPerMillion: 5 },
        allowedModels: ['m1', 'm2'],
        sort: 'price',
      },
      {
        allowedPeerIds: [`0x${'B'.repeat(40)}`],
        blockedPeerIds: ['d'.repeat(40)],
        minTrustScore: 60,
        maxPricing: { inputUsdPerMillion: 3, outputUsdPerMillion: 9 },
        allowedModels: ['m2', 'm3'],
        sort: 'free-first',
      },
    );
    expect(merged).toEqual({
      allowedPeerIds: ['b'.repeat(40)],
      blockedPeerIds: ['c'.repeat(40), 'd'.repeat(40)],
      minTrustScore: 70,
      maxPricing: { inputUsdPerMillion: 3, outputUsdPerMillion: 9 },
      allowedModels: ['m2'],
      sort: 'free-first',
    });
  });

  it('refuses models and pinned sellers outside the policy', () => {
    const policy: RoutingPolicy = { allowedModels: ['m1'], blockedPeerIds: ['c'.repeat(40)] };
    expect(modelRefusal(policy, 'm1')).toBeNull();
    expect(modelRefusal(policy, 'm2')).toMatch(/not among/);
    expect(modelRefusal(policy, `${'a'.repeat(40)}@m2`)).toMatch(/not among/);
    expect(modelRefusal(policy, `0x${'C'.repeat(40)}@m1`)).toMatch(/blocked/);
    expect(modelRefusal({ allowedPeerIds: ['a'.repeat(40)] }, `${'b'.repeat(40)}@m1`)).toMatch(
      /allowed list/,
    );
  });

  it('encodes the buyer header as base64url JSON in the seam shape', () => {
    const header = encodeBuyerPolicy({
      minTrustScore: 80,
      sort: 'free-first',
      allowedModels: ['m1'],
    });
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({
      minTrustScore: 80,
      preferFreeSellers: true,
      allowedModels: ['m1'],
    });
  });

  it('passes a measured-speed sort to the buyer, which decodes it', () => {
    const header = encodeBuyerPolicy(mergePolicies([{ sort: 'price' }, { sort: 'latency' }]));
    expect(decodeRoutingPolicy(header)).toEqual({ preferFreeSellers: false, sort: 'latency' });
  });
});
