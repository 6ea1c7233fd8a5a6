/**
 * The payments contract's history as plain rows: every event that changes a seller's on-chain
 * stats, read from the chain one block range at a time. Amounts stay bigint micro-USD; times are
 * the unix seconds of the block that holds the event.
 */
import { type Address, type Hex, parseEventLogs } from 'viem';
import type { PaymentsContract } from '../chain/index.js';
import { SvcPaymentsAbi } from '../contracts/index.js';

/** What happened to a channel. */
export type ChainEventKind = 'opened' | 'settled' | 'closed';

/** One stats-relevant event; (blockNumber, logIndex) identifies it on the canonical chain. */
export interface ChainEvent {
  blockNumber: bigint;
  logIndex: number;
  kind: ChainEventKind;
  channelId: Hex;
  seller: Address;
  buyer: Address;
  /** `settled`: micro-USD paid by this settlement; `closed`: total settled in the channel. */
  amountMicro: bigint;
  /** `closed` only: the buyer reclaimed the lock. */
  reclaimed: boolean;
  /** Unix seconds of the block. */
  blockTime: number;
}

const EVENT_NAMES = ['ChannelOpened', 'Settled', 'ChannelClosed'] as const;

const EVENTS = SvcPaymentsAbi.filter(
  (item) =>
    item.type === 'event' && (EVENT_NAMES as readonly string[]).includes(item.name as string),
);

/** Reads the stats-relevant events of blocks [fromBlock, toBlock] (both included). */
export async function readChainEvents(
  contract: PaymentsContract,
  fromBlock: bigint,
  toBlock: bigint,
): Promise<ChainEvent[]> {
  const client = contract.clients.publicClient;
  const logs = await client.getLogs({
    address: contract.paymentsAddress,
    events: EVENTS,
    fromBlock,
    toBlock,
  });
  const parsed = parseEventLogs({ abi: SvcPaymentsAbi, logs, eventName: [...EVENT_NAMES] });
  const blockTimes = new Map<bigint, number>();
  for (const log of parsed) {
    if (!blockTimes.has(log.blockNumber)) {
      const block = await client.getBlock({ blockNumber: log.blockNumber });
      blockTimes.set(log.blockNumber, Number(block.timestamp));
    }
  }
  return parsed.map((log): ChainEvent => {
    const base = {
      blockNumber: log.blockNumber,
      logIndex: log.logIndex,
      channelId: log.args.channelId,
      seller: log.args.seller.toLowerCase() as Address,
      buyer: log.args.buyer.toLowerCase() as Address,
      blockTime: blockTimes.get(log.blockNumber) ?? 0,
    };
    switch (log.eventName) {
      case 'ChannelOpened':
        return { ...base, kind: 'opened', amountMicro: 0n, reclaimed: false };
      case 'Settled':
        return { ...base, kind: 'settled', amountMicro: log.args.paid, reclaimed: false };
      default:
        return {
          ...base,
          kind: 'closed',
          amountMicro: log.args.settled,
          reclaimed: log.args.reclaimed,
        };
    }
  });
}
