/**
 * The indexer service (decisions 130-132): while it holds the crawl lease it crawls the network
 * with a client-only node and the buyer's own verified directory, follows the payments contract,
 * builds the snapshot every `refreshSeconds` and stores it; without the lease it serves whatever
 * snapshot the crawling indexer stored. Either way `/stats` is answered from memory.
 */
import { hostname } from 'node:os';
import { generatePrivateKey } from 'viem/accounts';
import type { PaymentsContract } from '../chain/index.js';
import type { NetworkConfig } from '../config/index.js';
import { type Logger, silentLogger } from '../log/index.js';
import {
  createSvcNode,
  MAX_METADATA_AGE_MS,
  type MetadataRejection,
  NetworkPeerDirectory,
  type SvcNode,
} from '../network/index.js';
import { buildSnapshot, type CrawledRecord } from './buildSnapshot.js';
import { ChainFollower } from './ChainFollower.js';
import type { CrawlLease } from './crawlLease.js';
import { type EncodedSnapshot, encodeSnapshot } from './encodedSnapshot.js';
import { type IndexerHttpServer, startIndexerHttp } from './httpServer.js';
import { IndexerMetrics } from './IndexerMetrics.js';
import type { IndexerStore } from './IndexerStore.js';
import { createRateLimiter } from './rateLimit.js';

export interface IndexerOptions {
  network: NetworkConfig;
  contract: PaymentsContract;
  store: IndexerStore;
  lease: CrawlLease;
  version: string;
  host?: string;
  port?: number;
  /** Seconds between snapshot rebuilds (and `Cache-Control` max-age). Default 120. */
  refreshSeconds?: number;
  /** How often an indexer without the lease looks for a newer stored snapshot. Default 5 s. */
  followerPollMs?: number;
  /** Requests per second per client address (0 = unlimited). Default 20. */
  rateLimitPerSecond?: number;
  /** Chain confirmation depth. Default 2. */
  confirmations?: number;
  /** First block to read when the store has no cursor. Default 0. */
  fromBlock?: bigint;
  logger?: Logger;
  now?: () => number;
}

/** A running indexer. */
export class Indexer {
  readonly metrics = new IndexerMetrics();
  private readonly options: IndexerOptions;
  private readonly follower: ChainFollower;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly id = `${hostname()}/${process.pid}`;
  private http: IndexerHttpServer | undefined;
  private crawler: { node: SvcNode; directory: NetworkPeerDirectory } | undefined;
  private current: EncodedSnapshot | undefined;
  private crawling = false;
  private staleRecords = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(options: IndexerOptions) {
    this.options = options;
    this.logger = options.logger ?? silentLogger();
    this.now = options.now ?? Date.now;
    this.follower = new ChainFollower({
      contract: options.contract,
      store: options.store,
      ...(options.confirmations !== undefined ? { confirmations: options.confirmations } : {}),
      ...(options.fromBlock !== undefined ? { fromBlock: options.fromBlock } : {}),
      now: this.now,
    });
  }

  get url(): string {
    if (!this.http) throw new Error('indexer not started');
    return this.http.url;
  }

  /** True while this process crawls (holds the lease). */
  isCrawling(): boolean {
    return this.crawling;
  }

  /** Listens, then runs the first round (crawl or load) in the background. */
  async start(): Promise<void> {
    const refreshSeconds = this.refreshSeconds();
    this.http = await startIndexerHttp({
      host: this.options.host ?? '127.0.0.1',
      port: this.options.port ?? 8380,
      current: () => this.current,
      health: () => this.health(),
      metrics: this.metrics,
      limiter: createRateLimiter(this.options.rateLimitPerSecond ?? 20),
      maxAgeSeconds: refreshSeconds,
    });
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
    await this.stopCrawler();
    await this.options.lease.release();
    await this.http?.close();
  }

  /** Runs one round now (crawl and rebuild when holding the lease, else load the stored one). */
  round(): Promise<void> {
    this.running ??= this.runRound().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private refreshSeconds(): number {
    return this.options.refreshSeconds ?? 120;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.round().finally(() =>
        this.schedule(
          this.crawling ? this.refreshSeconds() * 1000 : (this.options.followerPollMs ?? 5000),
        ),
      );
    }, delayMs);
    this.timer.unref();
  }

  private async runRound(): Promise<void> {
    try {
      const leader = await this.options.lease.tryAcquire();
      if (leader !== this.crawling) {
        this.logger.info(
          { crawling: leader },
          leader ? 'took the crawl lease' : 'lost the crawl lease',
        );
      }
      this.crawling = leader;
      this.metrics.crawling.set(leader ? 1 : 0);
      if (leader) await this.crawlAndBuild();
      else {
        await this.stopCrawler();
        await this.loadStored();
      }
    } catch (error) {
      this.logger.warn(
        { err: String(error) },
        'indexer round failed; the last snapshot stays served',
      );
    }
  }

  private async startCrawler(): Promise<NetworkPeerDirectory> {
    if (this.crawler) return this.crawler.directory;
    // A fresh key: the crawler sells and buys nothing, and must not use anyone's identity.
    // The indexer finds sellers itself: it never seeds from a snapshot (its own, under `svc up`).
    const { indexerUrl: _own, ...network } = this.options.network;
    const node = await createSvcNode({
      identity: { privateKey: generatePrivateKey() },
      config: network,
      role: 'client',
      logger: this.logger,
    });
    const directory = new NetworkPeerDirectory({ node });
    await directory.start();
    this.crawler = { node, directory };
    return directory;
  }

  private async stopCrawler(): Promise<void> {
    const crawler = this.crawler;
    this.crawler = undefined;
    if (!crawler) return;
    await crawler.directory.stop();
    await crawler.node.stop();
  }

  private async crawlAndBuild(): Promise<void> {
    const directory = await this.startCrawler();
    await directory.refresh();
    const chain = await this.follower.catchUp();
    if (chain.error) {
      this.metrics.chainErrors.inc();
      this.logger.warn(
        { err: chain.error },
        'chain read failed; serving the last good on-chain stats',
      );
    }
    const started = performance.now();
    const now = this.now();
    const records: CrawledRecord[] = [];
    for (const peer of directory.list()) {
      if (!peer.reachable) continue;
      // Verified when fetched, but a seller that stopped re-signing must not be served forever.
      if (now - peer.metadata.timestamp > MAX_METADATA_AGE_MS) {
        this.staleRecords += 1;
        continue;
      }
      records.push({
        metadata: peer.metadata,
        libp2pPeerId: directory.libp2pPeerIdOf(peer.metadata.peerId) ?? null,
        addresses: peer.addresses,
      });
    }
    const snapshot = buildSnapshot({
      records,
      chain,
      now,
      indexer: {
        id: this.id,
        version: this.options.version,
        chainId: this.options.contract.chainId,
        paymentsContract: this.options.contract.paymentsAddress,
        refreshSeconds: this.refreshSeconds(),
      },
    });
    const body = JSON.stringify(snapshot);
    this.serve(await encodeSnapshot(body, now), snapshot.peers.length);
    this.metrics.snapshotBuildSeconds.set((performance.now() - started) / 1000);
    this.updateRejections(directory.rejections());
    if (chain.lastBlock !== null) this.metrics.chainLastBlock.set(Number(chain.lastBlock));
    if (chain.refreshedAt !== null) this.metrics.chainRefreshedAt.set(chain.refreshedAt / 1000);
    await this.options.store.saveSnapshot({ body, builtAt: now });
  }

  private async loadStored(): Promise<void> {
    const stored = await this.options.store.loadSnapshot();
    if (stored && stored.builtAt !== this.current?.builtAt) {
      const peers = (JSON.parse(stored.body) as { peers?: unknown[] }).peers?.length ?? 0;
      this.serve(await encodeSnapshot(stored.body, stored.builtAt), peers);
    }
  }

  private serve(encoded: EncodedSnapshot, peerCount: number): void {
    this.current = encoded;
    this.metrics.snapshotBuiltAt.set(encoded.builtAt / 1000);
    this.metrics.peers.set(peerCount);
  }

  private updateRejections(counts: Partial<Record<MetadataRejection, number>>): void {
    for (const [reason, count] of Object.entries(counts)) {
      this.metrics.rejected.set({ reason }, count ?? 0);
    }
    this.metrics.rejected.set({ reason: 'stale' }, (counts.stale ?? 0) + this.staleRecords);
  }

  private health(): { ok: boolean } & Record<string, unknown> {
    const now = this.now();
    const chain = this.follower.view();
    return {
      ok: this.current !== undefined,
      crawling: this.crawling,
      snapshotBuiltAt: this.current?.builtAt ?? null,
      snapshotAgeSeconds: this.current ? Math.round((now - this.current.builtAt) / 1000) : null,
      chain: {
        lastBlock: chain.lastBlock === null ? null : Number(chain.lastBlock),
        refreshedAt: chain.refreshedAt,
        ageSeconds:
          chain.refreshedAt === null ? null : Math.round((now - chain.refreshedAt) / 1000),
        error: chain.error,
      },
    };
  }
}
