/**
 * The buyer's channel housekeeping: reconcile stored channels with the chain, request close and
 * reclaim the unspent lock, and metering (authoritative per-channel totals).
 */
import type { Hex } from 'viem';
import type { PaymentsContract } from '../../chain/index.js';
import { SvcError } from '../../errors/index.js';
import type { Logger } from '../../log/index.js';
import type { Clock, KeyedQueue } from '../clock.js';
import { type BuyerChannelRow, type BuyerChannelStatus, BuyerStore } from './store.js';
import type { IdentitySource } from './types.js';

export interface BuyerChannelsDeps {
  store: BuyerStore;
  contract: PaymentsContract;
  identities: IdentitySource;
  logger: Logger;
  clock: Clock;
  queue: KeyedQueue;
}

/** One line of `svc buyer metering`. */
export interface MeteringEntry {
  channelId: Hex;
  identity: string;
  seller: string;
  status: BuyerChannelStatus;
  requests: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  lockMicro: bigint;
  signedMicro: bigint;
  settledMicro: bigint;
  refusedClaims: number;
  /** Unix seconds from which `reclaim` works (0 when no close was requested). */
  reclaimableAt: number;
}

/** The metering view of a stored channel. */
export function toMeteringEntry(row: BuyerChannelRow): MeteringEntry {
  return {
    channelId: row.channelId,
    identity: row.identity,
    seller: row.seller,
    status: row.status,
    requests: row.requests,
    inputTokens: row.inputTokens,
    cachedInputTokens: row.cachedInputTokens,
    outputTokens: row.outputTokens,
    lockMicro: row.confirmedLockMicro,
    signedMicro: row.signedMicro,
    settledMicro: row.settledMicro,
    refusedClaims: row.refusedClaims,
    reclaimableAt: row.reclaimableAt,
  };
}

/** Stored channels of a buyer data directory, read without any chain access. */
export function readStoredChannels(dataDir: string): BuyerChannelRow[] {
  const store = new BuyerStore(dataDir);
  try {
    return store.list();
  } finally {
    store.close();
  }
}

function key(row: BuyerChannelRow): string {
  return `${row.identity}|${row.seller.toLowerCase()}`;
}

export class BuyerChannels {
  private readonly deps: BuyerChannelsDeps;

  constructor(deps: BuyerChannelsDeps) {
    this.deps = deps;
  }

  /** Copies chain truth into every channel that is not closed. */
  async reconcile(): Promise<void> {
    for (const row of this.deps.store.list({ status: ['open', 'closing'] }))
      await this.sync(row.channelId);
  }

  /** Re-reads one channel from chain (lock, settled, status, close request). */
  async sync(channelId: Hex): Promise<BuyerChannelRow> {
    const row = this.require(channelId);
    return this.deps.queue.run(key(row), async () => {
      const current = this.require(channelId);
      const onChain = await this.deps.contract.readChannel(channelId);
      const nowSeconds = Math.floor(this.deps.clock.now() / 1000);
      let next: BuyerChannelRow = { ...current, updatedAtMs: this.deps.clock.now() };
      if (onChain.status === 'none') {
        // Never opened: once its reserve expired nobody can open it, so it is dead.
        if (current.reserveDeadline < BigInt(nowSeconds))
          next = { ...next, status: 'closed', confirmedLockMicro: 0n };
      } else {
        const grace =
          onChain.closeRequestedAt > 0 ? await this.deps.contract.gracePeriodSeconds() : 0;
        next = {
          ...next,
          confirmedLockMicro: onChain.lockedMicro,
          settledMicro: onChain.settledMicro,
          status:
            onChain.status === 'closed'
              ? 'closed'
              : onChain.closeRequestedAt > 0
                ? 'closing'
                : current.status,
          reclaimableAt: onChain.closeRequestedAt > 0 ? onChain.closeRequestedAt + grace : 0,
        };
        if (onChain.lockedMicro > current.authorisedLockMicro)
          next.authorisedLockMicro = onChain.lockedMicro;
      }
      this.deps.store.put(next);
      return next;
    });
  }

  /** Asks the chain to close: the seller may settle during the grace period, then `reclaim`. */
  async requestClose(channelId: Hex): Promise<BuyerChannelRow> {
    const row = this.require(channelId);
    const { account } = this.deps.identities.load(row.identity);
    await this.deps.queue.run(key(row), async () => {
      const onChain = await this.deps.contract.readChannel(channelId);
      if (onChain.status === 'open') await this.deps.contract.requestClose(account, channelId);
    });
    return this.sync(channelId);
  }

  /** Takes back the unspent lock after the grace period. */
  async reclaim(channelId: Hex): Promise<BuyerChannelRow> {
    const row = this.require(channelId);
    const { account } = this.deps.identities.load(row.identity);
    await this.deps.queue.run(key(row), async () => {
      const onChain = await this.deps.contract.readChannel(channelId);
      if (onChain.status !== 'open') return;
      if (onChain.closeRequestedAt === 0) {
        throw new SvcError('invalid_request', {
          message: `Request close first: \`svc buyer channels close ${channelId}\`, then reclaim after the grace period.`,
        });
      }
      const grace = await this.deps.contract.gracePeriodSeconds();
      const now = await this.deps.contract.chainTime();
      if (now < onChain.closeRequestedAt + grace) {
        throw new SvcError('invalid_request', {
          message: `The grace period ends at ${new Date((onChain.closeRequestedAt + grace) * 1000).toISOString()}; reclaim after that.`,
          details: { reclaimableAt: onChain.closeRequestedAt + grace },
        });
      }
      await this.deps.contract.reclaim(account, channelId);
    });
    return this.sync(channelId);
  }

  list(filter: { identity?: string; status?: BuyerChannelStatus[] } = {}): BuyerChannelRow[] {
    return this.deps.store.list(filter);
  }

  /** Per-channel totals; with `refresh`, settled amounts and statuses are re-read from chain. */
  async metering(options: { refresh?: boolean } = {}): Promise<MeteringEntry[]> {
    if (options.refresh) {
      for (const row of this.deps.store.list()) {
        if (row.status !== 'closed' || row.settledMicro < row.signedMicro)
          await this.sync(row.channelId);
      }
    }
    return this.deps.store.list().map(toMeteringEntry);
  }

  private require(channelId: Hex): BuyerChannelRow {
    const row = this.deps.store.get(channelId);
    if (!row) throw new SvcError('channel_not_found', { details: { channelId } });
    return row;
  }
}
