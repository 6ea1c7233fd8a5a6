/**
 * The public snapshot (`GET /stats`) as data: every verified seller record exactly as signed,
 * beside what the chain says about that seller (decision 131). The record's own fields are never
 * edited, so anyone can drop the indexer's fields (`INDEXER_PEER_FIELDS`: on-chain stats, where
 * the seller was reached) and re-verify `signature`.
 */
import type { Address } from 'viem';
import { formatUsd } from '../money/index.js';
import type { OnChainStats, PeerMetadata, SnapshotPeer } from '../network/index.js';
import { trustScore } from '../payments/index.js';
import type { ChainView } from './ChainFollower.js';
import { emptySellerStats, type IndexedSellerStats } from './sellerStats.js';

/** Who built the snapshot and from which chain. */
export interface SnapshotIndexer {
  id: string;
  version: string;
  chainId: number;
  paymentsContract: Address;
  lastBlock: number | null;
  /** Unix ms of the last successful chain read; older than `updatedAt` when the RPC is down. */
  onChainStatsRefreshedAt: number | null;
  /** Why the last chain read failed, or null. */
  chainError: string | null;
  refreshSeconds: number;
}

export interface Snapshot {
  peers: SnapshotPeer[];
  /** Unix ms when this snapshot was built. */
  updatedAt: number;
  totals: {
    peers: number;
    services: number;
    providers: number;
    /** Channels ever opened on the contract (every seller, listed or not). */
    channels: number;
    /** Micro-USD ever settled on the contract, as 6-decimal USD. */
    settledVolumeUsd: string;
  };
  indexer: SnapshotIndexer;
}

/** A verified record and where the crawler reached its seller. */
export interface CrawledRecord {
  metadata: PeerMetadata;
  libp2pPeerId: string | null;
  addresses: readonly string[];
}

export interface BuildSnapshotInput {
  records: readonly CrawledRecord[];
  chain: ChainView;
  indexer: Omit<SnapshotIndexer, 'lastBlock' | 'onChainStatsRefreshedAt' | 'chainError'>;
  now: number;
}

function onChainStatsOf(stats: IndexedSellerStats, chainTimeSeconds: number): OnChainStats {
  return {
    settledVolumeUsd: formatUsd(stats.settledVolumeMicro),
    channelsOpened: stats.channelCount,
    channelsClosed: stats.channelsClosed,
    distinctBuyers: stats.uniqueBuyers,
    reclaimedUnsettled: stats.reclaimedUnsettled,
    firstSettlementAt: stats.firstSettlementAt > 0 ? stats.firstSettlementAt * 1000 : null,
    lastSettlementAt: stats.lastSettlementAt > 0 ? stats.lastSettlementAt * 1000 : null,
    reputationScore: trustScore(stats, chainTimeSeconds),
  };
}

/** Builds the snapshot (pure): records sorted by peer id, stats looked up by seller address. */
export function buildSnapshot(input: BuildSnapshotInput): Snapshot {
  const { chain } = input;
  const chainTimeSeconds = chain.chainTimeSeconds ?? Math.floor(input.now / 1000);
  const records = [...input.records].sort((a, b) =>
    a.metadata.peerId < b.metadata.peerId ? -1 : 1,
  );
  let services = 0;
  let providers = 0;
  const peers = records.map(({ metadata, libp2pPeerId, addresses }): SnapshotPeer => {
    providers += metadata.providers.length;
    for (const provider of metadata.providers) services += provider.services.length;
    const stats = chain.stats.get(`0x${metadata.peerId}` as Address) ?? emptySellerStats();
    return {
      ...metadata,
      onChainChannelCount: stats.channelCount,
      onChainStats: onChainStatsOf(stats, chainTimeSeconds),
      libp2pPeerId,
      addresses: [...addresses],
    };
  });
  let channels = 0;
  let volume = 0n;
  for (const stats of chain.stats.values()) {
    channels += stats.channelCount;
    volume += stats.settledVolumeMicro;
  }
  return {
    peers,
    updatedAt: input.now,
    totals: {
      peers: peers.length,
      services,
      providers,
      channels,
      settledVolumeUsd: formatUsd(volume),
    },
    indexer: {
      ...input.indexer,
      lastBlock: chain.lastBlock === null ? null : Number(chain.lastBlock),
      onChainStatsRefreshedAt: chain.refreshedAt,
      chainError: chain.error,
    },
  };
}
