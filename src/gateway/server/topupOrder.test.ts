/**
 * The order of the top-up route's refusals (spec 7): a key that may never be topped up is told so
 * (403) before anything about this gateway's set-up (501 without a facilitator) or the key's
 * wallet (400 when it cannot be loaded) — those would send its holder to fix the wrong thing.
 */
import type { FacilitatorClient } from '@x402/core/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryTopupLedger, type TopupChainReader, TopupService } from '../../x402/index.js';
import { type Harness, jsonOf, startHarness } from '../testing/harness.js';

/** Dependencies a refused top-up must never reach: each call fails the test. */
function unreachable(what: string): never {
  throw new Error(`a refused top-up reached the ${what}`);
}
const chain: TopupChainReader = {
  balanceOf: async () => unreachable('chain'),
  blockNumber: async () => unreachable('chain'),
  latestTimestamp: async () => unreachable('chain'),
  findAuthorizationUse: async () => unreachable('chain'),
};
const facilitator = {
  verify: async () => unreachable('facilitator'),
  settle: async () => unreachable('facilitator'),
  getSupported: async () => unreachable('facilitator'),
} as unknown as FacilitatorClient;

const topup = (h: Harness, secret: string) =>
  h.call('/v1/key/topup', { secret, method: 'POST', body: '{"amount_usd":"5"}' });

describe('top-up refusals, in order', () => {
  let none: Harness;
  let configured: Harness;
  beforeAll(async () => {
    none = await startHarness();
    configured = await startHarness({
      topups: async () =>
        new TopupService({
          ledger: new MemoryTopupLedger(),
          facilitator,
          chain,
          asset: {
            chainId: 8453,
            address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
            eip712Name: 'USD Coin',
            eip712Version: '2',
          },
          bounds: { minMicro: 2_000_000n, maxMicro: 500_000_000n },
          reconcileIntervalMs: 0,
        }),
    });
  });
  afterAll(async () => {
    await none?.stop();
    await configured?.stop();
  });

  it('a key of the default wallet: 403 topup_not_available, with or without a facilitator', async () => {
    for (const h of [none, configured]) {
      const { secret } = await h.key();
      const response = await topup(h, secret);
      expect(response.status).toBe(403);
      expect((await jsonOf(response)).error.code).toBe('topup_not_available');
    }
  });

  it('an own-wallet key without top-ups: 403 topup_not_allowed, with or without a facilitator', async () => {
    for (const h of [none, configured]) {
      const { secret } = await h.key({ identity: { kind: 'new' } });
      const response = await topup(h, secret);
      expect(response.status).toBe(403);
      expect((await jsonOf(response)).error.code).toBe('topup_not_allowed');
    }
  });

  it('an own-wallet key whose wallet is gone and top-ups off: 403 before the wallet 400', async () => {
    const { key, secret } = await configured.key({ identity: { kind: 'new' } });
    configured.identities.remove(key.identity);
    const response = await topup(configured, secret);
    expect(response.status).toBe(403);
    expect((await jsonOf(response)).error.code).toBe('topup_not_allowed');
  });

  it('a key that may be topped up, on a gateway without a facilitator: 501', async () => {
    const { secret } = await none.key({ identity: { kind: 'new' }, allowTopup: true });
    const response = await topup(none, secret);
    expect(response.status).toBe(501);
    expect((await jsonOf(response)).error.code).toBe('topup_not_implemented');
  });
});
