/**
 * A synchronous `ReputationSource` over an asynchronous score reader (the payments capability's
 * on-chain `ReputationReader`). Routing needs scores per request without waiting on the chain,
 * so scores are cached; a seller not yet scored is looked up in the background (batched) and is
 * unscored until the answer arrives. Cached scores are refreshed after `ttlMs`.
 */
import type { ReputationSource } from '../catalog/index.js';
import { addressFromPeerId, type PeerId, peerIdFromAddress } from '../identity/index.js';

/** What the cache reads from (src/payments `ReputationReader` fits). */
export interface ScoreReader {
  read(
    addresses: readonly `0x${string}`[],
  ): Promise<ReadonlyArray<{ address: string; score: number | null }>>;
}

export interface CachedReputationOptions {
  ttlMs?: number;
  now?: () => number;
  onError?: (error: unknown) => void;
}

export class CachedReputation implements ReputationSource {
  private readonly scores = new Map<PeerId, { score: number | undefined; at: number }>();
  private readonly pending = new Set<PeerId>();
  private flushing: Promise<void> | undefined;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly reader: ScoreReader,
    private readonly options: CachedReputationOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 5 * 60_000;
    this.now = options.now ?? Date.now;
  }

  score(peerId: PeerId): number | undefined {
    const entry = this.scores.get(peerId);
    if (!entry || this.now() - entry.at > this.ttlMs) this.request(peerId);
    return entry?.score;
  }

  /** Resolves once every lookup asked for so far has been answered (or failed). */
  async settled(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private request(peerId: PeerId): void {
    this.pending.add(peerId);
    this.flushing ??= Promise.resolve().then(() => this.flush());
  }

  private async flush(): Promise<void> {
    try {
      while (this.pending.size > 0) {
        const batch = [...this.pending];
        this.pending.clear();
        try {
          const results = await this.reader.read(batch.map((id) => addressFromPeerId(id)));
          const at = this.now();
          for (const id of batch) this.scores.set(id, { score: undefined, at });
          for (const result of results) {
            this.scores.set(peerIdFromAddress(result.address), {
              score: result.score ?? undefined,
              at,
            });
          }
        } catch (error) {
          this.options.onError?.(error);
          return;
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }
}
