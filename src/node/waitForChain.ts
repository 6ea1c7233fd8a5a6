/**
 * A starting buyer or seller waits a bounded time for an unreachable payment chain (an RPC node
 * restarting, a network blip) instead of giving up at the first failed call: the seller would
 * refuse to start and the buyer would run with free offers only for its whole life
 * (docs/decisions/207-start-waits-for-the-chain.md).
 */
import { isSvcError } from '../errors/index.js';
import type { Logger } from '../log/index.js';

/** How long a start waits for the chain when the config does not say (`chain.payments.chainWaitSeconds`). */
export const DEFAULT_CHAIN_WAIT_SECONDS = 30;

/** The longest pause between two tries. */
const MAX_PAUSE_MS = 8_000;

export interface ChainWait {
  /** Total time to keep trying; 0 tries once. */
  waitMs: number;
  logger: Logger;
  /** The RPC URL named in the log lines. */
  rpcUrl: string;
  /** What waits, for the log line ("seller", "buyer"). */
  who: string;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/**
 * Runs `attempt` until it succeeds, throws an SvcError other than `chain_unavailable` (a verdict,
 * such as a contract that is not ours, is not retried), or `waitMs` has passed: then the last failure is thrown. Pauses 1, 2,
 * 4, 8, 8… s between tries, each logged with when the next comes.
 */
export async function waitForChain(attempt: () => Promise<void>, wait: ChainWait): Promise<void> {
  const now = wait.now ?? Date.now;
  const sleep = wait.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const deadline = now() + wait.waitMs;
  for (let pause = 1_000; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
    try {
      await attempt();
      return;
    } catch (error) {
      if (isSvcError(error) && error.code !== 'chain_unavailable') throw error;
      const left = deadline - now();
      if (left <= 0) throw error;
      const next = Math.min(pause, left);
      wait.logger.warn(
        { rpcUrl: wait.rpcUrl, err: error instanceof Error ? error.message : String(error) },
        `${wait.who}: payment chain unreachable, trying again in ${Math.ceil(next / 1000)} s (gives up in ${Math.ceil(left / 1000)} s)`,
      );
      await sleep(next);
    }
  }
}
