/**
 * The buyer's verified peer cache (PeerDirectory). Peers come from the DHT (providers of the
 * sellers key) and from any connected peer that speaks `/svc/meta/1` (so small networks work
 * before provider records spread). Every record is verified before use; a peer that stops
 * answering is marked unreachable, rechecked soon and then less often, and dropped after
 * `network.peerTtlSeconds`. A new connection or a fresh record lists it again at once
 * (docs/decisions/178-a-seller-that-is-back.md).
 */
import type { Connection, PeerId as Libp2pPeerId } from '@libp2p/interface';
import { peerIdFromString } from '@libp2p/peer-id';
import type { Multiaddr } from '@multiformats/multiaddr';
import { errorMessage } from '../errors/index.js';
import type { PeerId } from '../identity/index.js';
import { type DirectoryHealth, directoryHealth } from './directoryHealth.js';
import { discoverSellers, parseMultiaddrs } from './discoverSellers.js';
import { seedFromIndexer } from './indexerSource.js';
import { peerIdFromLibp2p } from './keys.js';
import type { MetadataRejection } from './metadata/index.js';
import { fetchMetadata } from './metaProtocol.js';
import type { SvcNode } from './node.js';
import { type CachedPeer, loadPeerCache, savePeerCache } from './peerCacheFile.js';
import { META_PROTOCOL } from './protocols.js';
import { type RecheckOptions, Rechecks } from './rechecks.js';
import type { KnownPeer, PeerDirectory } from './types.js';

export interface NetworkPeerDirectoryOptions {
  node: SvcNode;
  /** Where `network/peers.json` lives; no persistence without it. */
  dataDir?: string;
  now?: () => number;
  /** Bound on one DHT provider lookup. */
  lookupTimeoutMs?: number;
  /** When unreachable peers are looked at again (defaults: 0.5 s, growing 1.5x, at most 60 s). */
  rechecks?: RecheckOptions;
}

/** How a peer can be dialled. */
export interface PeerRoute {
  readonly libp2pPeerId: Libp2pPeerId;
  readonly addresses: readonly Multiaddr[];
  readonly uploadLimitBytes: number;
}

const FETCH_CONCURRENCY = 16;
/** How long a fetched record counts as fresh when a new connection to its peer opens. */
const RECORD_FRESH_MS = 60_000;

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
  /** Bumped whenever the list or a peer's reachability changes (users rebuild what they derive). */
  private changes = 0;
  private readonly backListeners: ((peerId: PeerId) => void)[] = [];
  /** Peers whose last record was refused: a connection alone does not list them again. */
  private readonly refused = new Set<PeerId>();
  private readonly rechecks: Rechecks;
  private readonly onIdentify = (
    event: CustomEvent<{ peerId: Libp2pPeerId; protocols: string[] }>,
  ) => {
    if (!event.detail.protocols.includes(META_PROTOCOL)) return;
    // A record fetched moments ago is not fetched again for a new connection: that fetch would
    // run beside the request that opened the connection, on the same CPU
    // (docs/decisions/179-a-cheaper-new-connection.md).
    const peerId = peerIdFromLibp2p(event.detail.peerId);
    const entry = peerId === undefined ? undefined : this.peers.get(peerId);
    if (entry?.reachable && this.now() - entry.lastSeenAt < RECORD_FRESH_MS) return;
    void this.fetchOne(event.detail.peerId);
  };
  private readonly onConnection = (event: CustomEvent<Connection>) =>
    this.connected(event.detail.remotePeer);

  constructor(options: NetworkPeerDirectoryOptions) {
    this.node = options.node;
    this.dataDir = options.dataDir;
    this.now = options.now ?? Date.now;
    this.lookupTimeoutMs = options.lookupTimeoutMs ?? 15_000;
    this.rechecks = new Rechecks((peerId) => this.recheck(peerId), {
      maxMs: this.node.config.refreshIntervalSeconds * 1000,
      ...options.rechecks,
    });
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
    this.node.libp2p.addEventListener('connection:open', this.onConnection);
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
    this.node.libp2p.removeEventListener('connection:open', this.onConnection);
    this.rechecks.stop();
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
      addresses: parseMultiaddrs(entry.addresses),
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
      changes: this.changes,
      ...(this.lastRefreshAt !== undefined ? { lastRefreshAt: this.lastRefreshAt } : {}),
    };
  }

  /** Says plainly when nothing on the network answers (e.g. the bootstrap is down). */
  health(): DirectoryHealth {
    const reachable = [...this.peers.values()].filter((p) => p.reachable).length;
    return directoryHealth(this.node, reachable);
  }

  /**
   * Marks a peer unreachable (e.g. after a failed request dial) and schedules its rechecks. With
   * `route`, the verdict of an attempt that began on that route: a stale one (the peer was seen
   * alive since, so its route is another) changes nothing.
   */
  markUnreachable(peerId: PeerId, reason: string, route?: PeerRoute): void {
    const entry = this.peers.get(peerId);
    if (!entry) return;
    if (route !== undefined && this.routes.get(entry) !== route) return;
    if (entry.reachable) this.changes++;
    entry.reachable = false;
    entry.lastError = reason;
    entry.unreachableSince ??= this.now();
    this.rechecks.schedule(peerId);
  }

  /** Calls `listener` with each peer seen alive again after it was unreachable or failed. */
  onBack(listener: (peerId: PeerId) => void): void {
    this.backListeners.push(listener);
  }

  /**
   * A connection to a cached peer opened (it dialled us, or a dial of ours succeeded): it is
   * listed again at once, its rechecks stop, and its record is fetched anew.
   */
  private connected(id: Libp2pPeerId): void {
    const peerId = peerIdFromLibp2p(id);
    const entry = peerId === undefined ? undefined : this.peers.get(peerId);
    if (peerId === undefined || entry === undefined || this.stopped) return;
    if (!entry.reachable && this.refused.has(peerId)) void this.fetchOne(id);
    else if (!entry.reachable) {
      // A new object, so verdicts of attempts made on the old route are known to be stale.
      const { lastError: _error, unreachableSince: _since, ...rest } = entry;
      this.peers.set(peerId, { ...rest, reachable: true, lastSeenAt: this.now() });
      this.changes++;
      this.rechecks.cancel(peerId);
      void this.fetchOne(id);
    }
    this.announceBack(peerId);
  }

  private announceBack(peerId: PeerId): void {
    for (const listener of this.backListeners) listener(peerId);
  }

  /** A scheduled recheck: fetches the record again (which dials when there is no connection). */
  private recheck(peerId: PeerId): void {
    const entry = this.peers.get(peerId);
    if (entry === undefined || entry.reachable || this.stopped) return;
    void this.fetchOne(peerIdFromString(entry.libp2pPeerId));
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
        const addrs = parseMultiaddrs(hint.addresses);
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
    const candidates = await discoverSellers(this.node, this.lookupTimeoutMs);
    for (const entry of this.peers.values()) {
      candidates.set(entry.libp2pPeerId, peerIdFromString(entry.libp2pPeerId));
    }
    await this.fetchAll([...candidates.values()]);
    this.dropExpired();
    this.lastRefreshAt = this.now();
    this.persist();
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
    const before = this.peers.get(peerId);
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
        this.refused.add(peerId);
        this.markUnreachable(peerId, `record rejected: ${verdict.message}`);
        return;
      }
      const known = await peerStoreAddresses(this.node, id);
      const previous = this.peers.get(peerId);
      this.peers.set(peerId, {
        metadata: verdict.metadata,
        reachable: true,
        lastSeenAt: this.now(),
        addresses: [...new Set([...known, ...addresses])],
        libp2pPeerId: id.toString(),
      });
      this.changes++;
      this.rechecks.cancel(peerId);
      this.refused.delete(peerId);
      if (previous !== undefined && !previous.reachable) this.announceBack(peerId);
    } catch (error) {
      // Only when nothing newer came in meanwhile (a connection or a record proving it alive).
      if (this.peers.get(peerId) === before) this.markUnreachable(peerId, errorMessage(error));
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
        this.rechecks.cancel(peerId);
        this.refused.delete(peerId);
        this.changes++;
      }
    }
  }

  private async rememberAddresses(entry: CachedPeer): Promise<void> {
    const addrs = parseMultiaddrs(entry.addresses);
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
