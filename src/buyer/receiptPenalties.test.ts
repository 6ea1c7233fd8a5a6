/**
 * Refused receipts survive a restart of the buyer: a seller caught signing bad receipts on free
 * answers is penalised again, and checked on every answer for the hour after its last refusal,
 * when the buyer starts on the same data directory. Paid answers' refusals are replayed from the
 * payments store instead (src/node/startBuyerNode.ts), so they are not counted twice.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ReputationSource } from '../catalog/index.js';
import { type BuyerConfig, defaultConfig } from '../config/index.js';
import { silentLogger } from '../log/index.js';
import type { RequestRecord } from '../protocol/index.js';
import { type RunningBuyer, startBuyer } from './startBuyer.js';
import { MemoryNetwork } from './testing/memoryNetwork.js';

const dataDir = mkdtempSync(join(tmpdir(), 'svc-receipt-penalties-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const HOUR_MS = 3_600_000;
const clock = { now: 10 * HOUR_MS };

/** A reputation that keeps the penalties it is given. */
function penaltyBook(): ReputationSource & { penalties: Map<string, number> } {
  const penalties = new Map<string, number>();
  return {
    penalties,
    score: (peerId) => 80 - 25 * (penalties.get(peerId) ?? 0),
    penalise: (peerId, count = 1) => penalties.set(peerId, (penalties.get(peerId) ?? 0) + count),
  };
}

async function start(reputation: ReputationSource): Promise<RunningBuyer> {
  const network = new MemoryNetwork();
  const config: BuyerConfig = { ...defaultConfig().buyer, receiptCheckShare: 0.01 };
  return startBuyer({
    config,
    dataDir,
    directory: network.directory,
    transport: network.transport,
    reputation,
    clock: () => clock.now,
    logger: silentLogger(),
    port: 0,
    version: 'test',
  });
}

function answer(id: string, peerId: string, receipt: string, costUsd = '0.000000'): RequestRecord {
  return {
    requestId: id,
    status: 200,
    completed: true,
    streamed: false,
    peerId,
    provider: 'p',
    serviceId: 'm',
    model: 'm',
    usage: { inputTokens: 10, cachedInputTokens: 0, outputTokens: 5 },
    costUsd,
    latencyMs: 3,
    attempts: [],
    receipt,
  };
}

/** How many of `draws` free answers of `peerId` the buyer would check. */
const checked = (buyer: RunningBuyer, peerId: string, draws = 200) =>
  Array.from({ length: draws }, () => buyer.service.receiptSampler.shouldCheck(peerId)).filter(
    Boolean,
  ).length;

describe('refused receipts across a restart', () => {
  it('penalises the seller again and checks all its answers for the hour after', async () => {
    const first = await start(penaltyBook());
    const { records } = first.service;
    clock.now -= HOUR_MS / 2;
    records.put(answer('old-1', 'cheat', 'bad_signature'));
    clock.now += HOUR_MS / 2;
    records.put(answer('new-1', 'cheat', 'response_mismatch'));
    records.put(answer('ok-1', 'cheat', 'verified'));
    records.put(answer('ok-2', 'honest', 'verified'));
    records.put(answer('unchecked', 'honest', undefined as unknown as string));
    // A paid answer's refusal is replayed from the payments store, not from here.
    records.put(answer('paid-1', 'paid', 'bad_signature', '0.001200'));
    await first.stop();

    const book = penaltyBook();
    const second = await start(book);
    try {
      expect(Object.fromEntries(book.penalties)).toEqual({ cheat: 2 });
      expect(checked(second, 'cheat')).toBe(200);
      expect(checked(second, 'honest')).toBeLessThan(20);
      expect(checked(second, 'paid')).toBeLessThan(20);
      // An hour after its last refusal it is sampled again; the penalty stays.
      clock.now += HOUR_MS + 1;
      expect(checked(second, 'cheat')).toBeLessThan(20);
    } finally {
      await second.stop();
    }
  });
});
