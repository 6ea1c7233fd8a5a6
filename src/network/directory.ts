/**
 * The buyer's verified peer cache (PeerDirectory). Peers come from the DHT (providers of the
 * sellers key) and from any connected peer that speaks `/svc/meta/1` (so small networks work
 * before provider records spread). Every record is verified before use; a peer that stops
 * answering is marked unreachable, then dropped after `network.peerTtlSeconds`.
 */
import type { PeerId as Libp2pPeerId } from '@libp2p/interface';
import { peerIdFromString } from '@libp2p/peer-id';
import { type Multiaddr, multiaddr } from '@multiformats/multiaddr';
import { errorMessage } from '../errors/index.js';
import type { PeerId } from '../identity/index.js';
import { seedFromIndexer } from './indexerSource.js';
import { peerIdFromLibp2p } from './keys.js';
import type { MetadataRejection } from './metadata/index.js';
import { fetchMetadata } from './metaProtocol.js';
import type { SvcNode } from './node.js';
import { type CachedPeer, loadPeerCache, savePeerCache } from './peerCacheFile.js';
import { fetchPeerList } from './peerExchange.js';
import { META_PROTOCOL, PEERS_PROTOCOL, sellersDhtKey } from './protocols.js';
import { describeReachability, type Reachability } from './reachability.js';
import type { KnownPeer, PeerDirectory } from './types.js';

export interface NetworkPeerDirectoryOptions {
  node: SvcNode;
  /** Where `network/peers.json` lives; no persistence without it. */
  dataDir?: string;
  now?: () => number;
  /** Bound on one DHT provider lookup. */
  lookupTimeoutMs?: number;
}

/** How a peer can be dialled. */
export interface PeerRoute {
  readonly libp2pPeerId: Libp2pPeerId;
  readonly addresses: readonly Multiaddr[];
  readonly uploadLimitBytes: number;
}

/** Network health for `/_svc/status` and the CLI. */
export interface DirectoryHealth {
  status: 'ok' | 'no_peers_reachable';
  message: string;
  connections: number;
  /** How this node itself is reachable (public, relayed via whom, hole-punched peers). */
  reachableAs?: Reachability;
}

const FETCH_CONCURRENCY = 16;
/** Connected nodes asked for their sellers per refresh (bootstrap nodes, mostly). */
const EXCHANGE_PEERS = 8;

function toKnownPeer(entry: CachedPeer): KnownPeer {
  const { libp2pPeerId: _id, unreachableSince: _since, ...peer } = entry;
  return peer;
}

/** PeerDirectory on a live libp2p node. */
export class NetworkPeerDirectory implements PeerDirectory {
  private readonly node: SvcNode;
  private readonly dataDir: string | undefined;
  private readonly now: () => number;
  private readonly lookupTimeoutMs: number;
  private readonly peers = new Map<PeerId, CachedPeer>();
  /** Parsed routes, one per cached record object (records are replaced, never edited, on refresh). */
  private readonly routes = new WeakMap<CachedPeer, PeerRoute>();
  private readonly rejectionCounts = new Map<MetadataRejection, number>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private refreshing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastRefreshAt: number | undefined;
  private stopped = false;
  private readonly onIdentify = (
    event: CustomEvent<{ peerId: Libp2pPeerId; protocols: string[] }>,
  ) => {
    if (event.detail.protocols.includes(META_PROTOCOL)) void this.fetchOne(event.detail.peerId);
  };

  constructor(options: NetworkPeerDirectoryOptions) {
    this.node = options.node;
    this.dataDir = options.dataDir;
    this.now = options.now ?? Date.now;
    this.lookupTimeoutMs = options.lookupTimeoutMs ?? 15_000;
  }

  /** Loads the persisted cache, listens for new connections and starts the background refresh. */
  async start(): Promise<void> {
    if (this.dataDir !== undefined) {
      for (const entry of await loadPeerCache(this.dataDir)) {
        this.peers.set(entry.metadata.peerId, entry);
        await this.rememberAddresses(entry).catch(() => undefined);
      }
    }
    this.node.libp2p.addEventListener('peer:identify', this.onIdentify);
    const intervalMs = this.node.config.refreshIntervalSeconds * 1000;
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), intervalMs);
    this.timer.unref();
    void this.refresh().catch(() => undefined);
    const indexerUrl = this.node.config.indexerUrl;
    if (indexerUrl !== undefined) {
      // A head start from the public snapshot; the records themselves come from the sellers.
      void seedFromIndexer(this, indexerUrl).catch((error: unknown) =>
        this.node.logger.warn(
          { err: String(error) },
          'could not seed the peer cache from the indexer',
        ),
      );
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.node.libp2p.removeEventListener('peer:identify', this.onIdentify);
    await this.refreshing?.catch(() => undefined);
    this.persist();
  }

  list(): KnownPeer[] {
    return [...this.peers.values()].map(toKnownPeer);
  }

  get(peerId: PeerId): KnownPeer | undefined {
    const entry = this.peers.get(peerId);
    return entry ? toKnownPeer(entry) : undefined;
  }

  /** Libp2p id and addresses of a cached peer, for the transport. */
  route(peerId: PeerId): PeerRoute | undefined {
    const entry = this.peers.get(peerId);
    if (!entry) return undefined;
    // Parsing the PeerId validates a secp256k1 point: once per record, not once per request.
    const cached = this.routes.get(entry);
    if (cached) return cached;
    const route: PeerRoute = {
      libp2pPeerId: peerIdFromString(entry.libp2pPeerId),
      addresses: entry.addresses.flatMap((text) => {
        try {
          return [multiaddr(text)];
        } catch {
          return [];
        }
      }),
      uploadLimitBytes: entry.metadata.capabilities.uploadLimitBytes,
    };
    this.routes.set(entry, route);
    return route;
  }

  /** The libp2p PeerId (string form) of a cached peer: the reverse of `peerIdFromLibp2p`. */
  libp2pPeerIdOf(peerId: PeerId): string | undefined {
    return this.peers.get(peerId)?.libp2pPeerId;
  }

  /** How many received records were refused, by reason. */
  rejections(): Partial<Record<MetadataRejection, number>> {
    return Object.fromEntries(this.rejectionCounts);
  }

  status(): ReturnType<PeerDirectory['status']> {
    const peers = [...this.peers.values()];
    const dht = this.node.libp2p.services.dht as unknown as { routingTable?: { size?: number } };
    return {
      dhtNodeCount: dht.routingTable?.size ?? this.node.libp2p.getPeers().length,
      peerCount: peers.length,
      reachablePeerCount: peers.filter((p) => p.reachable).length,
      ...(this.lastRefreshAt !== undefined ? { lastRefreshAt: this.lastRefreshAt } : {}),
    };
  }

  /** Says plainly when nothing on the network answers (e.g. the bootstrap is down). */
  health(): DirectoryHealth {
    const connections = this.node.libp2p.getConnections().length;
    const reachable = [...this.peers.values()].filter((p) => p.reachable).length;
    if (connections === 0 && reachable === 0) {
      const bootstrap = this.node.config.bootstrap;
      return {
        status: 'no_peers_reachable',
        message:
          bootstrap.length === 0
            ? 'no peers reachable: network.bootstrap is empty, so this node knows nobody'
            : `no peers reachable: none of the ${bootstrap.length} bootstrap address(es) answered (${bootstrap.join(', ')})`,
        connections,
        reachableAs: describeReachability(this.node.libp2p),
      };
    }
    return {
      status: 'ok',
      message: `${connections} connection(s), ${reachable} reachable seller(s)`,
      connections,
      reachableAs: describeReachability(this.node.libp2p),
    };
  }

  /** Marks a peer unreachable (e.g. after a failed request dial). */
  markUnreachable(peerId: PeerId, reason: string): void {
    const entry = this.peers.get(peerId);
    if (!entry) return;
    entry.reachable = false;
    entry.lastError = reason;
    entry.unreachableSince ??= this.now();
  }

  /**
   * Dials peers named by someone else (an indexer's snapshot) and fetches each record from the
   * seller itself, verified like any other; a bad hint costs one failed dial. Bounded by FETCH_CONCURRENCY.
   */
  async seed(
    hints: readonly { libp2pPeerId: string; addresses: readonly string[] }[],
  ): Promise<void> {
    const queue: Libp2pPeerId[] = [];
    for (const hint of hints) {
      try {
        const id = peerIdFromString(hint.libp2pPeerId);
        const addrs = hint.addresses.flatMap((text) => {
          try {
            return [multiaddr(text)];
          } catch {
            return [];
          }
        });
        if (addrs.length > 0) await this.node.libp2p.peerStore.merge(id, { multiaddrs: addrs });
        queue.push(id);
      } catch {
        // Not a libp2p peer id: nothing to dial.
      }
    }
    await this.fetchAll(queue);
    this.persist();
  }

  /** Fetches every record of `queue`, FETCH_CONCURRENCY at a time. */
  private async fetchAll(queue: Libp2pPeerId[]): Promise<void> {
    const workers = Array.from({ length: Math.min(FETCH_CONCURRENCY, queue.length) }, async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        if (this.stopped) return;
        await this.fetchOne(next);
      }
    });
    await Promise.all(workers);
  }

  /** Re-discovers providers and re-fetches every known peer's record now. */
  refresh(): Promise<void> {
    this.refreshing ??= this.runRefresh().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async runRefresh(): Promise<void> {
    const libp2p = this.node.libp2p;
    if (libp2p.getConnections().length === 0 && this.node.config.bootstrap.length > 0) {
      await this.node.dialBootstrap();
    }
    const candidates = new Map<string, Libp2pPeerId>();
    const self = libp2p.peerId.toString();
    const add = (id: Libp2pPeerId) => {
      if (id.toString() !== self) candidates.set(id.toString(), id);
    };
    if (libp2p.getConnections().length > 0) {
      // The DHT lookup and the peer exchange with connected nodes run side by side: the exchange
      // finds a seller that joined a moment ago, the DHT finds the ones nobody we know is near.
      await Promise.all([this.lookupProviders(add), this.exchangePeers(add)]);
    }
    for (const connection of libp2p.getConnections()) {
      const peer = await libp2p.peerStore.get(connection.remotePeer).catch(() => undefined);
      if (peer?.protocols.includes(META_PROTOCOL)) add(connection.remotePeer);
    }
    for (const entry of this.peers.values()) add(peerIdFromString(entry.libp2pPeerId));
    await this.fetchAll([...candidates.values()]);
    this.dropExpired();
    this.lastRefreshAt = this.now();
    this.persist();
  }

  private async lookupProviders(add: (id: Libp2pPeerId) => void): Promise<void> {
    const libp2p = this.node.libp2p;
    try {
      const signal = AbortSignal.timeout(this.lookupTimeoutMs);
      for await (const provider of libp2p.contentRouting.findProviders(await sellersDhtKey(), {
        signal,
      })) {
        if (provider.multiaddrs.length > 0) {
          await libp2p.peerStore
            .merge(provider.id, { multiaddrs: provider.multiaddrs })
            .catch(() => undefined);
        }
        add(provider.id);
      }
    } catch (error) {
      this.node.logger.debug({ err: String(error) }, 'provider lookup ended early');
    }
  }

  /** Asks up to EXCHANGE_PEERS connected nodes that serve `/svc/peers/1` which sellers they see. */
  private async exchangePeers(add: (id: Libp2pPeerId) => void): Promise<void> {
    const libp2p = this.node.libp2p;
    const askable: Libp2pPeerId[] = [];
    for (const connection of libp2p.getConnections()) {
      if (askable.length >= EXCHANGE_PEERS) break;
      const peer = await libp2p.peerStore.get(connection.remotePeer).catch(() => undefined);
      if (peer?.protocols.includes(PEERS_PROTOCOL)) askable.push(connection.remotePeer);
    }
    const lists = await Promise.all(askable.map((id) => fetchPeerList(libp2p, id)));
    for (const peer of lists.flat()) {
      if (peer.addrs.length > 0) {
        await libp2p.peerStore.merge(peer.id, { multiaddrs: peer.addrs }).catch(() => undefined);
      }
      add(peer.id);
    }
  }

  /** Fetches one peer's record (deduplicated while in flight). */
  private fetchOne(id: Libp2pPeerId): Promise<void> {
    const key = id.toString();
    const existing = this.inFlight.get(key);
    if (existing) return existing;
    const task = this.doFetch(id).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, task);
    return task;
  }

  private async doFetch(id: Libp2pPeerId): Promise<void> {
    const peerId = peerIdFromLibp2p(id);
    if (peerId === undefined || this.stopped) return;
    try {
      const { verdict, addresses } = await fetchMetadata(this.node, id);
      if (!verdict.ok) {
        this.rejectionCounts.set(
          verdict.reason,
          (this.rejectionCounts.get(verdict.reason) ?? 0) + 1,
        );
        this.node.logger.warn(
          { peerId, reason: verdict.reason, detail: verdict.message },
          'peer record rejected',
        );
        this.markUnreachable(peerId, `record rejected: ${verdict.message}`);
        return;
      }
      const known = await peerStoreAddresses(this.node, id);
      this.peers.set(peerId, {
        metadata: verdict.metadata,
        reachable: true,
        lastSeenAt: this.now(),
        addresses: [...new Set([...known, ...addresses])],
        libp2pPeerId: id.toString(),
      });
    } catch (error) {
      this.markUnreachable(peerId, errorMessage(error));
    }
  }

  private dropExpired(): void {
    const ttlMs = this.node.config.peerTtlSeconds * 1000;
    for (const [peerId, entry] of this.peers) {
      if (
        !entry.reachable &&
        entry.unreachableSince !== undefined &&
        this.now() - entry.unreachableSince > ttlMs
      ) {
        this.peers.delete(peerId);
      }
    }
  }

  private async rememberAddresses(entry: CachedPeer): Promise<void> {
    const addrs = entry.addresses.flatMap((text) => {
      try {
        return [multiaddr(text)];
      } catch {
        return [];
      }
    });
    if (addrs.length > 0) {
      await this.node.libp2p.peerStore.merge(peerIdFromString(entry.libp2pPeerId), {
        multiaddrs: addrs,
      });
    }
  }

  private persist(): void {
    if (this.dataDir === undefined) return;
    try {
      savePeerCache(this.dataDir, [...this.peers.values()]);
    } catch (error) {
      this.node.logger.warn({ err: String(error) }, 'could not save the peer cache');
    }
  }
}

async function peerStoreAddresses(node: SvcNode, id: Libp2pPeerId): Promise<string[]> {
  const peer = await node.libp2p.peerStore.get(id).catch(() => undefined);
  return (peer?.addresses ?? []).map((a) => a.multiaddr.toString());
}
