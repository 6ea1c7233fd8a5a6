/**
 * `svc network browse` as data: filter peers by service text and tags, sort them,
 * keep the top N. Reputation and on-chain stats are not computed by the network layer: a peer
 * carries them only when its source (e.g. a running buyer) supplied them; otherwise they are
 * null, and sorts by them fall back to price so the order stays meaningful.
 */
import { rankingPrice, type TokenPricing, toPriceMicro } from '../money/index.js';
import type { KnownPeer, PeerMetadata, ProviderAnnouncement } from './types.js';

export const BROWSE_SORTS = ['score', 'volume', 'sessions', 'price', 'recent'] as const;
export type BrowseSort = (typeof BROWSE_SORTS)[number];

/** Reputation as far as it is known (null = unknown, never guessed). */
export interface PeerReputation {
  score: number | null;
  volumeUsd: string | null;
  sessions: number | null;
}

/** One peer in a browse result: its signed metadata plus what the source knew about it. */
export type BrowsePeer = PeerMetadata & {
  reputation: PeerReputation;
  reachable: boolean | null;
  lastSeenAt: number | null;
};

export interface BrowseResult {
  source: string;
  onChainStatsRefreshedAt: number | null;
  sort: BrowseSort;
  filters: { service: string | null; tags: string[] | null };
  total: number;
  peers: BrowsePeer[];
}

export interface BrowseOptions {
  source: string;
  sort?: BrowseSort;
  service?: string;
  tags?: string[];
  top?: number;
  onChainStatsRefreshedAt?: number | null;
}

/** A peer as a source hands it over: a KnownPeer, or metadata, optionally with reputation. */
export type BrowseInput = (KnownPeer | PeerMetadata) & { reputation?: Partial<PeerReputation> };

/** Price of one service of a provider (servicePricing, else defaultPricing). */
export function servicePricing(provider: ProviderAnnouncement, serviceId: string): TokenPricing {
  return provider.servicePricing?.[serviceId] ?? provider.defaultPricing;
}

function toBrowsePeer(input: BrowseInput): BrowsePeer {
  const known = 'metadata' in input ? input : undefined;
  const metadata = known ? known.metadata : (input as PeerMetadata);
  const reputation = input.reputation ?? {};
  return {
    ...metadata,
    reputation: {
      score: typeof reputation.score === 'number' ? reputation.score : null,
      volumeUsd: typeof reputation.volumeUsd === 'string' ? reputation.volumeUsd : null,
      sessions: typeof reputation.sessions === 'number' ? reputation.sessions : null,
    },
    reachable: known ? known.reachable : null,
    lastSeenAt: known ? known.lastSeenAt : null,
  };
}

/** Services of a peer that match the filters, with their providers. */
export function matchingServices(
  peer: PeerMetadata,
  service?: string,
  tags?: string[],
): { provider: ProviderAnnouncement; serviceId: string }[] {
  const needle = service?.toLowerCase();
  const out: { provider: ProviderAnnouncement; serviceId: string }[] = [];
  for (const provider of peer.providers) {
    for (const serviceId of provider.services) {
      if (needle && !serviceId.toLowerCase().includes(needle)) continue;
      if (tags && tags.length > 0) {
        const categories = (provider.serviceCategories?.[serviceId] ?? []).map((c) =>
          c.toLowerCase(),
        );
        if (!tags.every((tag) => categories.includes(tag.toLowerCase()))) continue;
      }
      out.push({ provider, serviceId });
    }
  }
  return out;
}

/** Cheapest ranking price (input + output, micro-USD per million) over matching services. */
function cheapest(peer: PeerMetadata, service?: string, tags?: string[]): bigint {
  let best: bigint | undefined;
  for (const { provider, serviceId } of matchingServices(peer, service, tags)) {
    const price = rankingPrice(toPriceMicro(servicePricing(provider, serviceId)));
    if (best === undefined || price < best) best = price;
  }
  return best ?? BigInt(Number.MAX_SAFE_INTEGER);
}

function compareNullableDesc(a: number | null, b: number | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return b - a;
}

/** Filters, sorts and cuts a peer list into the shape `svc network browse --json` prints. */
export function browsePeers(inputs: BrowseInput[], options: BrowseOptions): BrowseResult {
  const sort = options.sort ?? 'score';
  const tags = options.tags && options.tags.length > 0 ? options.tags : undefined;
  const peers = inputs
    .map(toBrowsePeer)
    .filter((peer) =>
      options.service || tags ? matchingServices(peer, options.service, tags).length > 0 : true,
    );
  const price = new Map(peers.map((peer) => [peer.peerId, cheapest(peer, options.service, tags)]));
  const byPrice = (a: BrowsePeer, b: BrowsePeer) => {
    const diff = price.get(a.peerId)! - price.get(b.peerId)!;
    return diff < 0n ? -1 : diff > 0n ? 1 : a.peerId.localeCompare(b.peerId);
  };
  const volume = (peer: BrowsePeer) =>
    peer.reputation.volumeUsd === null ? null : Number(peer.reputation.volumeUsd);
  peers.sort((a, b) => {
    let order = 0;
    if (sort === 'score') order = compareNullableDesc(a.reputation.score, b.reputation.score);
    else if (sort === 'volume') order = compareNullableDesc(volume(a), volume(b));
    else if (sort === 'sessions')
      order = compareNullableDesc(a.reputation.sessions, b.reputation.sessions);
    else if (sort === 'recent') order = b.timestamp - a.timestamp;
    return order !== 0 ? order : byPrice(a, b);
  });
  return {
    source: options.source,
    onChainStatsRefreshedAt: options.onChainStatsRefreshedAt ?? null,
    sort,
    filters: { service: options.service ?? null, tags: tags ?? null },
    total: peers.length,
    peers: peers.slice(0, options.top ?? 20),
  };
}

/** Peers collected for `svc network browse`, and where from. */
export interface CollectedPeers {
  source: string;
  peers: BrowseInput[];
  /** Said to the user when nothing could be reached. */
  problem?: string;
  /** Unix ms of the source's last on-chain stats read (an indexer knows it). */
  onChainStatsRefreshedAt?: number | null;
}
