/** Typed reads and writes of the SvcPayments and USDC contracts. */
import { type Account, type Address, type Hex, parseEventLogs } from 'viem';
import { SvcPaymentsAbi, TestUSDCAbi } from '../contracts/index.js';
import type { ChainClients } from './clients.js';

/** Channel status as stored on chain. */
export type OnChainChannelStatus = 'none' | 'open' | 'closed';

export interface OnChainChannel {
  channelId: Hex;
  buyer: Address;
  seller: Address;
  /** Micro-USD locked for the channel (total, including what was settled). */
  lockedMicro: bigint;
  /** Micro-USD already paid to the seller. */
  settledMicro: bigint;
  openedAt: number;
  /** Unix seconds of the buyer's requestClose, 0 when none. */
  closeRequestedAt: number;
  status: OnChainChannelStatus;
}

export interface OnChainSellerStats {
  settledVolumeMicro: bigint;
  channelCount: number;
  uniqueBuyers: number;
  reclaimedUnsettled: number;
  /** Unix seconds, 0 when never settled. */
  firstSettlementAt: number;
  lastSettlementAt: number;
}

export interface CloseRequestedEvent {
  channelId: Hex;
  buyer: Address;
  seller: Address;
  reclaimableAt: number;
  blockNumber: bigint;
}

const STATUS: OnChainChannelStatus[] = ['none', 'open', 'closed'];

/** The payments contract at `paymentsAddress` and its USDC. */
export class PaymentsContract {
  readonly clients: ChainClients;
  readonly paymentsAddress: Address;
  readonly usdcAddress: Address;
  /**
   * The grace period this node expects the contract to have (the network's, or the local
   * deployment's); undefined when unknown, and then not checked at start.
   */
  readonly expectedGracePeriodSeconds: number | undefined;

  constructor(
    clients: ChainClients,
    paymentsAddress: Address,
    usdcAddress: Address,
    expectedGracePeriodSeconds?: number,
  ) {
    this.clients = clients;
    this.paymentsAddress = paymentsAddress;
    this.usdcAddress = usdcAddress;
    this.expectedGracePeriodSeconds = expectedGracePeriodSeconds;
  }

  get chainId(): number {
    return this.clients.chain.id;
  }

  // ------------------------------------------------------------------ reads

  async usdcBalanceOf(owner: Address): Promise<bigint> {
    return this.clients.publicClient.readContract({
      address: this.usdcAddress,
      abi: TestUSDCAbi,
      functionName: 'balanceOf',
      args: [owner],
    });
  }

  /** Free (unlocked) credits of a buyer in the payments contract. */
  async creditsOf(buyer: Address): Promise<bigint> {
    return this.clients.publicClient.readContract({
      address: this.paymentsAddress,
      abi: SvcPaymentsAbi,
      functionName: 'balanceOf',
      args: [buyer],
    });
  }

  async channelIdOf(buyer: Address, seller: Address, salt: Hex): Promise<Hex> {
    return this.clients.publicClient.readContract({
      address: this.paymentsAddress,
      abi: SvcPaymentsAbi,
      functionName: 'channelIdOf',
      args: [buyer, seller, salt],
    });
  }

  async readChannel(channelId: Hex): Promise<OnChainChannel> {
    const raw = await this.clients.publicClient.readContract({
      address: this.paymentsAddress,
      abi: SvcPaymentsAbi,
      functionName: 'getChannel',
      args: [channelId],
    });
    return {
      channelId,
      buyer: raw.buyer,
      seller: raw.seller,
      lockedMicro: raw.locked,
      settledMicro: raw.settled,
      openedAt: Number(raw.openedAt),
      closeRequestedAt: Number(raw.closeRequestedAt),
      status: STATUS[raw.status] ?? 'none',
    };
  }

  /** Stats of many sellers in one contract call. */
  async sellerStats(sellers: readonly Address[]): Promise<OnChainSellerStats[]> {
    if (sellers.length === 0) return [];
    const raw = await this.clients.publicClient.readContract({
      address: this.paymentsAddress,
      abi: SvcPaymentsAbi,
      functionName: 'sellerStatsBatch',
      args: [sellers],
    });
    return raw.map((entry) => ({
      settledVolumeMicro: entry.settledVolume,
      channelCount: Number(entry.channelCount),
      uniqueBuyers: Number(entry.uniqueBuyers),
      reclaimedUnsettled: Number(entry.reclaimedUnsettled),
      firstSettlementAt: Number(entry.firstSettlementAt),
      lastSettlementAt: Number(entry.lastSettlementAt),
    }));
  }

  async gracePeriodSeconds(): Promise<number> {
    const value = await this.clients.publicClient.readContract({
      address: this.paymentsAddress,
      abi: SvcPaymentsAbi,
      functionName: 'gracePeriod',
    });
    return Number(value);
  }

  /** `CloseRequested` events naming `seller` in blocks [fromBlock, toBlock]. */
  async closeRequests(
    seller: Address,
    fromBlock: bigint,
    toBlock: bigint,
  ): Promise<CloseRequestedEvent[]> {
    const logs = await this.clients.publicClient.getLogs({
      address: this.paymentsAddress,
      event: closeRequestedEvent,
      args: { seller },
      fromBlock,
      toBlock,
    });
    const parsed = parseEventLogs({ abi: SvcPaymentsAbi, logs, eventName: 'CloseRequested' });
    return parsed.map((log) => ({
      channelId: log.args.channelId,
      buyer: log.args.buyer,
      seller: log.args.seller,
      reclaimableAt: Number(log.args.reclaimableAt),
      blockNumber: log.blockNumber,
    }));
  }

  async blockNumber(): Promise<bigint> {
    return this.clients.publicClient.getBlockNumber({ cacheTime: 0 });
  }

  /** Timestamp (unix seconds) of the latest block. */
  async chainTime(): Promise<number> {
    const block = await this.clients.publicClient.getBlock({ blockTag: 'latest' });
    return Number(block.timestamp);
  }

  // ------------------------------------------------------------------ writes

  /** Moves `amountMicro` USDC from `account`'s wallet into its credits (approve + deposit). */
  async deposit(account: Account, amountMicro: bigint): Promise<void> {
    const sender = this.clients.senderFor(account);
    await sender.write({
      address: this.usdcAddress,
      abi: TestUSDCAbi,
      functionName: 'approve',
      args: [this.paymentsAddress, amountMicro],
    });
    await sender.write({
      address: this.paymentsAddress,
      abi: SvcPaymentsAbi,
      functionName: 'deposit',
      args: [account.address, amountMicro],
    });
  }

  async withdraw(
    account: Account,
    amountMicro: bigint,
    to: Address = account.address,
  ): Promise<void> {
    await this.clients.senderFor(account).write({
      address: this.paymentsAddress,
      abi: SvcPaymentsAbi,
      functionName: 'withdraw',
      args: [amountMicro, to],
    });
  }

  async openChannel(
    seller: Account,
    reserve: { buyer: Address; salt: Hex; maxAmount: bigint; deadline: bigint; signature: Hex },
  ): Promise<void> {
    await this.clients.senderFor(seller).write({
      address: this.paymentsAddress,
      abi: SvcPaymentsAbi,
      functionName: 'openChannel',
      args: [reserve.buyer, reserve.salt, reserve.maxAmount, reserve.deadline, reserve.signature],
    });
  }

  async topUp(
    submitter: Account,
    reserve: { channelId: Hex; maxAmount: bigint; deadline: bigint; signature: Hex },
  ): Promise<void> {
    await this.clients.senderFor(submitter).write({
      address: this.paymentsAddress,
      abi: SvcPaymentsAbi,
      functionName: 'topUp',
      args: [reserve.channelId, reserve.maxAmount, reserve.deadline, reserve.signature],
    });
  }

  async settle(
    submitter: Account,
    channelId: Hex,
    cumulativeMicro: bigint,
    signature: Hex,
  ): Promise<void> {
    await this.clients.senderFor(submitter).write({
      address: this.paymentsAddress,
      abi: SvcPaymentsAbi,
      functionName: 'settle',
      args: [channelId, cumulativeMicro, signature],
    });
  }

  /** Seller closes; pass `signature` '0x' to close without a further voucher. */
  async close(
    seller: Account,
    channelId: Hex,
    cumulativeMicro: bigint,
    signature: Hex,
  ): Promise<void> {
    await this.clients.senderFor(seller).write({
      address: this.paymentsAddress,
      abi: SvcPaymentsAbi,
      functionName: 'close',
      args: [channelId, cumulativeMicro, signature],
    });
  }

  async requestClose(buyer: Account, channelId: Hex): Promise<void> {
    await this.clients.senderFor(buyer).write({
      address: this.paymentsAddress,
      abi: SvcPaymentsAbi,
      functionName: 'requestClose',
      args: [channelId],
    });
  }

  async reclaim(buyer: Account, channelId: Hex): Promise<void> {
    await this.clients.senderFor(buyer).write({
      address: this.paymentsAddress,
      abi: SvcPaymentsAbi,
      functionName: 'reclaim',
      args: [channelId],
    });
  }
}

const closeRequestedEvent = SvcPaymentsAbi.find(
  (
    item,
  ): item is Extract<(typeof SvcPaymentsAbi)[number], { type: 'event'; name: 'CloseRequested' }> =>
    item.type === 'event' && item.name === 'CloseRequested',
)!;
