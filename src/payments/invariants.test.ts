/**
 * Invariants of SvcPayments under random sequences of honest and malicious operations, on a real
 * anvil chain (docs/decisions/177-payments-invariants-and-gas.md). Three buyers, three sellers and
 * two relayers deposit (directly and by EIP-3009 authorization), withdraw, open, top up, settle,
 * close, request close and reclaim channels, with forged, replayed, stale, mirrored, truncated,
 * cross-chain and cross-contract signatures, calls by non-parties, and jumps in time to either
 * side of the grace period. After every step the chain must agree with the model (down to the
 * revert reason) and the invariants in ./invariants/checks.ts must hold.
 *
 * `npm test` runs SVC_INVARIANT_RUNS sequences (default 30) of 30–60 generated operations from a
 * fixed seed; `npm run test:soak` runs 1000 from a random one. A failure prints the seed and the
 * shrunk sequence; replay it with SVC_INVARIANT_SEED=<seed> and the same SVC_INVARIANT_RUNS.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationArb } from './testing/invariants/operations.js';
import { newStats, runSequence } from './testing/invariants/run.js';
import { World } from './testing/invariants/world.js';

const RUNS = Number(process.env.SVC_INVARIANT_RUNS ?? 30);
/**
 * `npm test` replays one fixed seed, so its coverage check below cannot flake and a failure
 * replays as it is; `npm run test:soak` sets SVC_INVARIANT_SEED=random and explores new sequences.
 */
const DEFAULT_SEED = 1;
const SEED_ENV = process.env.SVC_INVARIANT_SEED ?? String(DEFAULT_SEED);
const SEED = SEED_ENV === 'random' ? undefined : Number(SEED_ENV);
if (SEED !== undefined && !Number.isInteger(SEED)) {
  throw new Error(`SVC_INVARIANT_SEED must be an integer or "random", not "${SEED_ENV}"`);
}
const MIN_STEPS = 30;
const MAX_STEPS = 60;

let world: World;

beforeAll(async () => {
  world = await World.start();
});

afterAll(async () => {
  await world?.stop();
});

describe('SvcPayments invariants', () => {
  it(
    `hold over ${RUNS} random sequences of ${MIN_STEPS}–${MAX_STEPS} operations`,
    async () => {
      const stats = newStats();
      await fc.assert(
        fc.asyncProperty(
          fc.array(operationArb, { minLength: MIN_STEPS, maxLength: MAX_STEPS }),
          (operations) => runSequence(world, operations, stats),
        ),
        { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
      );
      const kinds = [...stats.byKind.entries()]
        .map(([kind, counts]) => `${kind} ${counts.succeeded}/${counts.reverted}`)
        .join(', ');
      console.log(
        `invariants: ${stats.sequences} sequences, ${stats.steps} steps (${stats.transactions} transactions); succeeded/reverted: ${kinds}`,
      );
      if (process.env.SVC_INVARIANT_REASONS) {
        console.log(
          [...stats.reverts.entries()]
            .sort()
            .map(([k, n]) => `${k} ${n}`)
            .join('\n'),
        );
      }
      // The generator reaches every path that moves money, not only the refusals.
      for (const kind of [
        'deposit',
        'depositWithAuthorization',
        'withdraw',
        'openChannel',
        'topUp',
        'settle',
        'close',
      ] as const) {
        expect(stats.byKind.get(kind)?.succeeded ?? 0, kind).toBeGreaterThan(0);
        expect(stats.byKind.get(kind)?.reverted ?? 0, kind).toBeGreaterThan(0);
      }
    },
    Math.max(120_000, RUNS * 10_000),
  );
});
