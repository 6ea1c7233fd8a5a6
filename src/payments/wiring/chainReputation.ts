/**
 * The buyer's reputation source from on-chain stats (decision 073): trust scores of the peers in
 * the directory are read in batches by `ReputationReader` and refreshed on a timer; `score()`
 * answers synchronously from the last read (routing needs no chain call per request). A seller
 * whose usage claim the buyer refused loses `penaltyPerRefusal` points per refusal; the buyer
 * restores the refusals of the last `PENALTY_MEMORY_MS` from its voucher history when it starts.
 */
import type { ReputationSource } from '../../catalog/index.js';
import { addressFromPeerId, type PeerId } from '../../identity/index.js';
import type { Logger } from '../../log/index.js';
import { formatUsd } from '../../money/index.js';
import type { ReputationReader, SellerReputation } from '../reputation.js';

/** How long a refused usage claim keeps counting against a seller (across restarts). */
export const PENALTY_MEMORY_MS = 30 * 86_400_000;

export interface ChainReputationOptions {
  reader: ReputationReader;
  /** Peers to score (e.g. the directory's). */
  peers: () => PeerId[];
  logger: Logger;
  /** Refresh period; 0 = no timer (call `refresh`). Default 60 s. */
  refreshMs?: number;
  /** Points taken per refused usage claim. Default 25. */
  penaltyPerRefusal?: number;
}

export class ChainReputation implements ReputationSource {
  private readonly options: ChainReputationOptions;
  private readonly known = new Map<PeerId, SellerReputation>();
  private readonly penalties = new Map<PeerId, number>();
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;

  constructor(options: ChainReputationOptions) {
    this.options = options;
  }

  score(peerId: PeerId): number | undefined {
    const penalty = this.penalties.get(peerId) ?? 0;
    const base = this.known.get(peerId)?.score ?? undefined;
    if (base === undefined) return penalty > 0 ? 0 : undefined;
    return Math.max(0, base - penalty);
  }

  details(peerId: PeerId): { volumeUsd: string | null; sessions: number | null } | undefined {
    const known = this.known.get(peerId);
    if (!known) return undefined;
    return {
      volumeUsd: formatUsd(known.stats.settledVolumeMicro),
      sessions: known.stats.channelCount,
    };
  }

  /** A refused usage claim (or `count` of them, restored from history): the seller ranks lower. */
  penalise(peerId: PeerId, count = 1): void {
    const points = (this.options.penaltyPerRefusal ?? 25) * count;
    this.penalties.set(peerId, (this.penalties.get(peerId) ?? 0) + points);
  }

  /** Reads the current stats of every peer; a chain failure keeps the previous scores. */
  refresh(): Promise<void> {
    this.refreshing ??= this.read().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  start(): void {
    const every = this.options.refreshMs ?? 60_000;
    void this.refresh();
    if (every > 0) {
      this.timer = setInterval(() => void this.refresh(), every);
      this.timer.unref();
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.refreshing;
  }

  private async read(): Promise<void> {
    const peers = [...new Set(this.options.peers())];
    if (peers.length === 0) return;
    try {
      const results = await this.options.reader.read(peers.map((peer) => addressFromPeerId(peer)));
      for (const [index, peer] of peers.entries()) this.known.set(peer, results[index]!);
    } catch (error) {
      this.options.logger.warn({ err: String(error) }, 'reading on-chain seller stats failed');
    }
  }
}
