/**
 * The seller's chain work: opening/topping up channels, settling vouchers, closing idle or
 * close-requested channels, watching `CloseRequested` events from a persisted block cursor, and
 * reconciling every stored channel with the chain at start. Work on one channel is serialised.
 */
import type { Address, Hex } from 'viem';
import type { LocalAccount } from 'viem/accounts';
import type { OnChainChannel, PaymentsContract } from '../../chain/index.js';
import { errorFirstLine, SvcError } from '../../errors/index.js';
import type { Logger } from '../../log/index.js';
import type { Clock, KeyedQueue } from '../clock.js';
import type { ReserveMessage } from '../signatures.js';
import type { PaymentObject } from '../wire.js';
import type { SellerChannelRow, SellerStore } from './store.js';

const CURSOR_KEY = 'closeRequestedCursor';
/** Largest block range per getLogs call (public RPCs cap it). */
const LOG_RANGE = 5000n;

export interface SellerChainDeps {
  account: LocalAccount;
  contract: PaymentsContract;
  store: SellerStore;
  queue: KeyedQueue;
  clock: Clock;
  logger: Logger;
  settleThresholdMicro: bigint;
  settleIdleMs: number;
  closeIdleMs: number;
  hasInFlight: (channelId: Hex) => boolean;
}

export class SellerChain {
  private readonly deps: SellerChainDeps;

  constructor(deps: SellerChainDeps) {
    this.deps = deps;
  }

  /** Opens the channel (or raises its lock) on chain; called inside the channel's queue. */
  async openOrTopUp(
    channel: SellerChannelRow | undefined,
    payment: PaymentObject,
    reserve: ReserveMessage,
    signature: Hex,
  ): Promise<SellerChannelRow> {
    const { contract, account, store, clock } = this.deps;
    try {
      let onChain = await contract.readChannel(payment.channelId);
      if (onChain.status === 'none') {
        await contract.openChannel(account, {
          buyer: payment.buyer,
          salt: payment.salt,
          maxAmount: reserve.maxAmount,
          deadline: reserve.deadline,
          signature,
        });
      } else if (onChain.status === 'open' && onChain.lockedMicro < reserve.maxAmount) {
        await contract.topUp(account, {
          channelId: payment.channelId,
          maxAmount: reserve.maxAmount,
          deadline: reserve.deadline,
          signature,
        });
      }
      onChain = await contract.readChannel(payment.channelId);
      if (onChain.status !== 'open') {
        throw new SvcError('payment_invalid', {
          message: 'This channel is closed: open a new one.',
          details: { reason: 'channel_closed' },
        });
      }
      // Re-read: requests on this channel may have been recorded while the transaction ran.
      const latest = store.get(payment.channelId) ?? channel;
      const row: SellerChannelRow = {
        channelId: payment.channelId,
        buyer: payment.buyer,
        salt: payment.salt,
        voucherMicro: latest?.voucherMicro ?? onChain.settledMicro,
        voucherSignature: latest?.voucherSignature ?? null,
        billedMicro: latest?.billedMicro ?? onChain.settledMicro,
        requests: latest?.requests ?? 0,
        lockMicro: onChain.lockedMicro,
        settledMicro: onChain.settledMicro,
        status: 'open',
        closeRequested: onChain.closeRequestedAt > 0,
        lastActivityMs: clock.now(),
      };
      store.put(row);
      return row;
    } catch (error) {
      if (error instanceof SvcError) throw error;
      this.deps.logger.warn(
        { channelId: payment.channelId, err: errorFirstLine(error) },
        'opening channel failed',
      );
      const text = errorFirstLine(error);
      const reason = /insufficient credits/.test(text) ? 'insufficient_credits' : 'open_failed';
      throw new SvcError('payment_invalid', {
        message: `The channel could not be opened or topped up on chain: ${text}`,
        details: { reason },
        cause: error,
      });
    }
  }

  /** Settles in the background when the unsettled amount passed the threshold. */
  settleIfDue(channelId: Hex): void {
    const channel = this.deps.store.get(channelId);
    if (channel?.status !== 'open') return;
    if (channel.voucherMicro - channel.settledMicro >= this.deps.settleThresholdMicro) {
      void this.settle(channelId).catch(() => undefined);
    }
  }

  /** Settles the latest voucher of one channel (no-op when nothing is unsettled). */
  settle(channelId: Hex): Promise<void> {
    return this.deps.queue.run(channelId, async () => {
      const channel = this.deps.store.get(channelId);
      if (channel?.status !== 'open' || !channel.voucherSignature) return;
      if (channel.voucherMicro <= channel.settledMicro) return;
      try {
        await this.deps.contract.settle(
          this.deps.account,
          channelId,
          channel.voucherMicro,
          channel.voucherSignature,
        );
        this.deps.store.put({
          ...this.deps.store.get(channelId)!,
          settledMicro: channel.voucherMicro,
        });
        this.deps.logger.info(
          { channelId, settledMicro: channel.voucherMicro.toString() },
          'channel settled',
        );
      } catch (error) {
        this.deps.logger.warn(
          { channelId, err: errorFirstLine(error) },
          'settle failed; reconciling with chain',
        );
        await this.syncFromChain(channelId);
        throw error;
      }
    });
  }

  /** Closes a channel with its latest voucher, returning the rest of the lock to the buyer. */
  close(channelId: Hex): Promise<void> {
    return this.deps.queue.run(channelId, async () => {
      const channel = this.deps.store.get(channelId);
      if (channel?.status !== 'open') return;
      const withVoucher =
        channel.voucherSignature !== null && channel.voucherMicro > channel.settledMicro;
      try {
        await this.deps.contract.close(
          this.deps.account,
          channelId,
          withVoucher ? channel.voucherMicro : channel.settledMicro,
          withVoucher ? channel.voucherSignature! : '0x',
        );
      } catch (error) {
        this.deps.logger.warn(
          { channelId, err: errorFirstLine(error) },
          'close failed; reconciling with chain',
        );
        await this.syncFromChain(channelId);
        return;
      }
      const settled = withVoucher ? channel.voucherMicro : channel.settledMicro;
      this.deps.store.put({
        ...this.deps.store.get(channelId)!,
        settledMicro: settled,
        status: 'closed',
      });
      this.deps.logger.info({ channelId, settledMicro: settled.toString() }, 'channel closed');
    });
  }

  async settleAll(): Promise<void> {
    for (const channel of this.deps.store.list('open')) {
      if (channel.voucherMicro > channel.settledMicro)
        await this.settle(channel.channelId).catch(() => undefined);
    }
  }

  /** Reconciles every open stored channel with the chain, then scans missed close requests. */
  async reconcile(): Promise<void> {
    for (const channel of this.deps.store.list('open')) await this.syncFromChain(channel.channelId);
    await this.scanCloseRequests();
    await this.actOnChannels();
  }

  /** Background round: events, then settlements and closes that are due. */
  async tick(): Promise<void> {
    try {
      await this.scanCloseRequests();
      await this.actOnChannels();
    } catch (error) {
      this.deps.logger.warn(
        { err: errorFirstLine(error) },
        'payments tick failed; retrying next tick',
      );
    }
  }

  private async actOnChannels(): Promise<void> {
    const now = this.deps.clock.now();
    for (const channel of this.deps.store.list('open')) {
      const idleMs = now - channel.lastActivityMs;
      const busy = this.deps.hasInFlight(channel.channelId);
      try {
        if (channel.closeRequested || (!busy && idleMs >= this.deps.closeIdleMs)) {
          await this.close(channel.channelId);
        } else if (
          channel.voucherMicro > channel.settledMicro &&
          (channel.voucherMicro - channel.settledMicro >= this.deps.settleThresholdMicro ||
            idleMs >= this.deps.settleIdleMs)
        ) {
          await this.settle(channel.channelId);
        }
      } catch (error) {
        this.deps.logger.warn(
          { channelId: channel.channelId, err: errorFirstLine(error) },
          'channel upkeep failed',
        );
      }
    }
  }

  /** Reads new `CloseRequested` events for this seller from the persisted cursor on. */
  private async scanCloseRequests(): Promise<void> {
    const { contract, store } = this.deps;
    const latest = await contract.blockNumber();
    const stored = store.getMeta(CURSOR_KEY);
    // First run: nothing of ours can predate the database by much; do not scan from genesis.
    let from =
      stored !== undefined ? BigInt(stored) + 1n : latest > 10_000n ? latest - 10_000n : 0n;
    while (from <= latest) {
      const to = from + LOG_RANGE - 1n < latest ? from + LOG_RANGE - 1n : latest;
      const events = await contract.closeRequests(this.deps.account.address, from, to);
      for (const event of events) {
        const channel = store.get(event.channelId);
        if (channel && channel.status === 'open') {
          store.put({ ...channel, closeRequested: true });
        } else if (!channel) {
          // Unknown to us (e.g. a lost database): import it so the buyer's money is released.
          await this.syncFromChain(event.channelId, true);
        }
      }
      store.setMeta(CURSOR_KEY, to.toString());
      from = to + 1n;
    }
  }

  /** Imports a channel of this seller with `buyer` that exists on chain but not in the store. */
  async adopt(channelId: Hex, buyer: Address): Promise<SellerChannelRow | undefined> {
    const onChain = await this.deps.contract.readChannel(channelId).catch(() => undefined);
    if (!onChain || onChain.buyer.toLowerCase() !== buyer.toLowerCase()) return undefined;
    await this.syncFromChain(channelId, true);
    return this.deps.store.get(channelId);
  }

  /** Copies chain truth (lock, settled, close request, status) into the stored row. */
  private async syncFromChain(channelId: Hex, importUnknown = false): Promise<void> {
    let onChain: OnChainChannel;
    try {
      onChain = await this.deps.contract.readChannel(channelId);
    } catch (error) {
      this.deps.logger.warn({ channelId, err: errorFirstLine(error) }, 'reading channel failed');
      return;
    }
    const stored = this.deps.store.get(channelId);
    if (!stored && !importUnknown) return;
    if (onChain.seller.toLowerCase() !== this.deps.account.address.toLowerCase()) return;
    const base: SellerChannelRow = stored ?? {
      channelId,
      buyer: onChain.buyer,
      salt: '0x',
      voucherMicro: onChain.settledMicro,
      voucherSignature: null,
      billedMicro: onChain.settledMicro,
      requests: 0,
      lockMicro: onChain.lockedMicro,
      settledMicro: onChain.settledMicro,
      status: 'open',
      closeRequested: false,
      lastActivityMs: this.deps.clock.now(),
    };
    if (onChain.status === 'closed' && base.voucherMicro > onChain.settledMicro) {
      this.deps.logger.warn(
        {
          channelId,
          voucherMicro: base.voucherMicro.toString(),
          settledMicro: onChain.settledMicro.toString(),
        },
        'channel was closed on chain before its latest voucher was settled',
      );
    }
    this.deps.store.put({
      ...base,
      lockMicro: onChain.lockedMicro,
      settledMicro: onChain.settledMicro,
      status: onChain.status === 'open' ? 'open' : 'closed',
      closeRequested: onChain.closeRequestedAt > 0,
    });
  }
}
