/** Starts a buyer on port 0 over a MemoryNetwork, in a temporary data dir (tests only). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ReputationSource, staticReputation } from '../../catalog/index.js';
import { type BuyerConfig, deepMerge, defaultConfig } from '../../config/index.js';
import { type Logger, silentLogger } from '../../log/index.js';
import type { BuyerPayments } from '../payments.js';
import { type RunningBuyer, startBuyer } from '../startBuyer.js';
import { MemoryNetwork } from './memoryNetwork.js';

export interface TestBuyer {
  buyer: RunningBuyer;
  network: MemoryNetwork;
  dataDir: string;
  url: string;
  stop(): Promise<void>;
}

export interface TestBuyerOptions {
  config?: Record<string, unknown>;
  /** Scores by peer id; default: every seller the test adds later scores 80 via `scoreAll`. */
  reputation?: ReputationSource;
  payments?: BuyerPayments | 'unpaid-dev';
  network?: MemoryNetwork;
  /** The buyer's clock (default `Date.now`). */
  clock?: () => number;
  /** Default: silent. */
  logger?: Logger;
}

/** A reputation that scores every seller `score` unless listed. */
export function scoreAll(score: number, overrides: Record<string, number> = {}): ReputationSource {
  const listed = staticReputation(overrides);
  return { score: (peerId) => listed.score(peerId) ?? score };
}

export async function startTestBuyer(options: TestBuyerOptions = {}): Promise<TestBuyer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-buyer-test-'));
  const network = options.network ?? new MemoryNetwork();
  const config = deepMerge(
    defaultConfig().buyer as unknown as Record<string, unknown>,
    options.config ?? {},
  ) as unknown as BuyerConfig;
  const buyer = await startBuyer({
    config,
    dataDir,
    directory: network.directory,
    transport: network.transport,
    reputation: options.reputation ?? scoreAll(80),
    ...(options.payments ? { payments: options.payments } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    logger: options.logger ?? silentLogger(),
    port: 0,
    version: 'test',
  });
  return {
    buyer,
    network,
    dataDir,
    url: buyer.url,
    stop: async () => {
      await buyer.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
