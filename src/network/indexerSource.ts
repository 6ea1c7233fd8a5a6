/**
 * The public snapshot (`GET <indexer>/stats`) as a source of peers, for `svc network browse
 * --indexer` and for seeding a buyer's cache (`network.indexerUrl`). The wire shape of a snapshot
 * peer lives here, beside its reader: the seller's signed record unchanged plus the indexer's own
 * fields, which are dropped before the record is verified again. Nothing is trusted because an
 * indexer said so: each record must still verify, and a buyer fetches it from the seller itself
 * before using it.
 */

import { errorMessage } from '../errors/index.js';
import type { BrowseInput, CollectedPeers } from './browse.js';
import { verifyMetadata } from './metadata/index.js';
import type { PeerMetadata } from './types.js';

/** A seller's on-chain record as the indexer serves it (6-decimal USD strings, unix ms). */
export interface OnChainStats {
  settledVolumeUsd: string;
  channelsOpened: number;
  channelsClosed: number;
  distinctBuyers: number;
  reclaimedUnsettled: number;
  firstSettlementAt: number | null;
  lastSettlementAt: number | null;
  /** The trust score a buyer computes from the same facts (null: no history). */
  reputationScore: number | null;
}

/** Fields an indexer adds beside a signed record (drop them to re-verify the signature). */
export const INDEXER_PEER_FIELDS = [
  'onChainChannelCount',
  'onChainStats',
  'libp2pPeerId',
  'addresses',
] as const;

/** One peer of the snapshot. */
export type SnapshotPeer = PeerMetadata & {
  onChainChannelCount: number;
  onChainStats: OnChainStats;
  /** Where the indexer reached the seller (libp2p id and multiaddrs), for dialling it directly. */
  libp2pPeerId: string | null;
  addresses: string[];
};

/** Largest snapshot read: about 1,000 peers per MiB. */
const MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024;
/** Bound on how many peers of one snapshot are looked at. */
const MAX_SNAPSHOT_PEERS = 50_000;

interface RawSnapshot {
  url: string;
  peers: unknown[];
  onChainStatsRefreshedAt: number | null;
}

/** GETs `<indexerUrl>/stats`, reading at most MAX_SNAPSHOT_BYTES. Throws when unreachable or too big. */
async function fetchSnapshot(indexerUrl: string, timeoutMs: number): Promise<RawSnapshot> {
  const url = `${indexerUrl.replace(/\/+$/, '')}/stats`;
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok || !response.body) throw new Error(`${url} answered ${response.status}`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > MAX_SNAPSHOT_BYTES) {
      await response.body.cancel().catch(() => undefined);
      throw new Error(`${url} is larger than ${MAX_SNAPSHOT_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
    peers?: unknown;
    indexer?: { onChainStatsRefreshedAt?: unknown };
  };
  const refreshedAt = body.indexer?.onChainStatsRefreshedAt;
  return {
    url,
    peers: Array.isArray(body.peers) ? body.peers.slice(0, MAX_SNAPSHOT_PEERS) : [],
    onChainStatsRefreshedAt: typeof refreshedAt === 'number' ? refreshedAt : null,
  };
}

/** The signed record inside a snapshot peer (indexer fields removed). */
export function signedRecordOf(peer: object): Record<string, unknown> {
  const record: Record<string, unknown> = { ...peer };
  for (const field of INDEXER_PEER_FIELDS) delete record[field];
  return record;
}

/** What a snapshot read gives: verified peers (with the indexer's extras) and its timestamps. */
export interface IndexerPeers {
  url: string;
  peers: SnapshotPeer[];
  /** Unix ms of the indexer's last successful chain read, null when unknown. */
  onChainStatsRefreshedAt: number | null;
  /** Peers dropped because their record did not verify (tampered, stale...). */
  rejected: number;
}

/** Reads `<indexerUrl>/stats` and keeps the peers whose record verifies. Throws when unreachable. */
export async function readIndexerPeers(
  indexerUrl: string,
  options: { timeoutMs?: number; now?: number } = {},
): Promise<IndexerPeers> {
  const {
    url,
    peers: list,
    onChainStatsRefreshedAt,
  } = await fetchSnapshot(indexerUrl, options.timeoutMs ?? 10_000);
  const peers: SnapshotPeer[] = [];
  let rejected = 0;
  for (const entry of list) {
    if (typeof entry !== 'object' || entry === null) {
      rejected += 1;
      continue;
    }
    const record = signedRecordOf(entry as Record<string, unknown>);
    const verdict = await verifyMetadata(
      record,
      options.now !== undefined ? { now: options.now } : {},
    );
    if (!verdict.ok) {
      rejected += 1;
      continue;
    }
    const extras = entry as Partial<SnapshotPeer>;
    peers.push({
      ...verdict.metadata,
      onChainChannelCount:
        typeof extras.onChainChannelCount === 'number' ? extras.onChainChannelCount : 0,
      onChainStats: extras.onChainStats as OnChainStats,
      libp2pPeerId: typeof extras.libp2pPeerId === 'string' ? extras.libp2pPeerId : null,
      addresses: Array.isArray(extras.addresses)
        ? extras.addresses.filter((a): a is string => typeof a === 'string').slice(0, 16)
        : [],
    });
  }
  return { url, peers, onChainStatsRefreshedAt, rejected };
}

/** A snapshot read as browse input: reputation, volume and sessions from the chain via the indexer. */
export async function peersFromIndexer(indexerUrl: string): Promise<CollectedPeers> {
  const source = `indexer:${indexerUrl.replace(/\/+$/, '')}/stats`;
  let read: IndexerPeers;
  try {
    read = await readIndexerPeers(indexerUrl);
  } catch (error) {
    return {
      source,
      peers: [],
      onChainStatsRefreshedAt: null,
      problem: `indexer not reachable: ${errorMessage(error)}`,
    };
  }
  const peers = read.peers.map(
    (peer): BrowseInput => ({
      ...peer,
      reputation: {
        score: peer.onChainStats?.reputationScore ?? null,
        volumeUsd: peer.onChainStats?.settledVolumeUsd ?? null,
        sessions: peer.onChainChannelCount,
      },
    }),
  );
  return {
    source,
    peers,
    onChainStatsRefreshedAt: read.onChainStatsRefreshedAt,
    ...(read.rejected > 0
      ? { problem: `${read.rejected} record(s) from the indexer did not verify and were left out` }
      : {}),
  };
}

/** Most sellers one seeding dials (the regular refresh finds the rest). */
const MAX_SEEDS = 1_000;

/**
 * Seeds `directory` with where the sellers an indexer lists can be reached. Only those hints are
 * taken: each record is fetched from its seller and verified there, so the snapshot's copies are
 * not verified here (a signature check each, for nothing).
 */
export async function seedFromIndexer(
  directory: {
    seed(hints: readonly { libp2pPeerId: string; addresses: readonly string[] }[]): Promise<void>;
  },
  indexerUrl: string,
): Promise<number> {
  const { peers } = await fetchSnapshot(indexerUrl, 10_000);
  const hints: { libp2pPeerId: string; addresses: string[] }[] = [];
  for (const peer of peers) {
    if (hints.length >= MAX_SEEDS) break;
    const { libp2pPeerId, addresses } = (peer ?? {}) as {
      libp2pPeerId?: unknown;
      addresses?: unknown;
    };
    if (typeof libp2pPeerId !== 'string' || libp2pPeerId.length > 100) continue;
    hints.push({
      libp2pPeerId,
      addresses: Array.isArray(addresses)
        ? addresses.filter((a): a is string => typeof a === 'string' && a.length < 300).slice(0, 16)
        : [],
    });
  }
  await directory.seed(hints);
  return hints.length;
}
