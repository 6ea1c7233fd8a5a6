/**
 * The indexer on a real network: anvil with the payments contract and settled channels, a
 * libp2p bootstrap node, three honest sellers and three serving bad records, and `svc indexer`
 * (SQLite store) crawling them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/testing/runCli.js';
import { formatUsd } from '../money/index.js';
import {
  type BrowseResult,
  NetworkPeerDirectory,
  signedRecordOf,
  verifyMetadata,
} from '../network/index.js';
import {
  loopbackNetworkConfig,
  startLoopbackNode,
  type TestIdentity,
  waitFor,
} from '../network/testing/index.js';
import { type IndexerNode, startIndexerNode } from '../node/index.js';
import { trustScore } from '../payments/index.js';
import type { Snapshot } from './index.js';
import { IndexerNetwork, type TestSeller } from './testing/indexerNetwork.js';

let net: IndexerNetwork;
let honest: TestSeller[];
let bad: TestSeller[];
let buyers: TestIdentity[];
let dataDir: string;
let running: IndexerNode | undefined;

async function startOne(): Promise<IndexerNode> {
  running = await startIndexerNode({
    network: loopbackNetworkConfig({ bootstrap: [net.bootstrapAddress] }),
    contract: net.chain.contract,
    dataDir,
    port: 0,
    refreshSeconds: 1,
    rateLimitPerSecond: 0,
    confirmations: 2,
    version: 'test',
  });
  return running;
}

async function stats(url: string): Promise<Snapshot> {
  return (await (await fetch(`${url}/stats`)).json()) as Snapshot;
}

/** Waits for a snapshot listing the honest sellers and covering every block up to `block`. */
async function settledSnapshot(url: string, block: bigint): Promise<Snapshot> {
  return waitFor(
    async () => {
      const reply = await fetch(`${url}/stats`);
      if (reply.status !== 200) return false;
      const snapshot = (await reply.json()) as Snapshot;
      return snapshot.peers.length >= honest.length &&
        snapshot.indexer.lastBlock !== null &&
        snapshot.indexer.lastBlock >= Number(block)
        ? snapshot
        : false;
    },
    60_000,
    'a snapshot of every honest seller',
  );
}

/** What the contract's own counters say about `seller`, in the snapshot's units. */
async function contractView(seller: TestSeller) {
  const [stats] = await net.chain.contract.sellerStats([seller.node.identity.account.address]);
  const chainTime = await net.chain.contract.chainTime();
  return {
    settledVolumeUsd: formatUsd(stats!.settledVolumeMicro),
    channelsOpened: stats!.channelCount,
    distinctBuyers: stats!.uniqueBuyers,
    reclaimedUnsettled: stats!.reclaimedUnsettled,
    firstSettlementAt: stats!.firstSettlementAt ? stats!.firstSettlementAt * 1000 : null,
    lastSettlementAt: stats!.lastSettlementAt ? stats!.lastSettlementAt * 1000 : null,
    reputationScore: trustScore(stats!, chainTime),
  };
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-indexer-'));
  net = await IndexerNetwork.start();
  honest = [];
  honest.push(await net.startSeller('alpha'), await net.startSeller('beta'));
  // Gamma signs its record honestly but claims a big on-chain history in it.
  honest.push(await net.startSeller('gamma', 'liar'));
  bad = [
    await net.startSeller('old', 'stale'),
    await net.startSeller('tampered', 'tampered'),
    await net.startSeller('foreign', 'foreign-signed'),
    await net.startSeller('huge', 'oversized'),
  ];
  buyers = [await net.fundedBuyer(), await net.fundedBuyer()];
  const [alpha, beta] = honest.map((s) => s.node.identity);
  await net.payChannel(buyers[0]!, alpha!, [100_000n, 250_000n], { close: true });
  await net.payChannel(buyers[1]!, alpha!, [50_000n]);
  await net.payChannel(buyers[0]!, beta!, [300_000n], { close: true });
  await net.mine(3);
}, 120_000);

afterAll(async () => {
  await running?.stop();
  await net?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('svc indexer on a real network (SQLite)', () => {
  let snapshot: Snapshot;
  let url: string;

  it('lists every honest seller with its signed record, which still verifies', {
    timeout: 90_000,
  }, async () => {
    url = (await startOne()).url;
    snapshot = await settledSnapshot(url, (await net.chain.contract.blockNumber()) - 2n);
    expect(snapshot.peers.map((p) => p.peerId).sort()).toEqual(
      honest.map((s) => s.node.peerId).sort(),
    );
    for (const peer of snapshot.peers) {
      const record = signedRecordOf(peer);
      const verdict = await verifyMetadata(record, { expectedPeerId: peer.peerId });
      expect(verdict.ok).toBe(true);
      // Byte for byte what the seller serves.
      const seller = honest.find((s) => s.node.peerId === peer.peerId)!;
      expect(record).toEqual(JSON.parse(new TextDecoder().decode(seller.bytes)));
    }
    expect(snapshot.indexer).toMatchObject({
      chainId: net.chain.contract.chainId,
      paymentsContract: net.chain.contract.paymentsAddress,
      version: 'test',
      chainError: null,
    });
  });

  it('never serves a tampered, foreign-signed, oversized or stale record, and counts them in /metrics', async () => {
    const listed = new Set(snapshot.peers.map((p) => p.peerId));
    for (const seller of bad) expect(listed.has(seller.node.peerId)).toBe(false);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const count = (reason: string) =>
      Number(
        new RegExp(`svc_indexer_records_rejected_total\\{reason="${reason}"\\} (\\d+)`).exec(
          metrics,
        )?.[1] ?? 0,
      );
    expect(count('bad_signature')).toBeGreaterThanOrEqual(2);
    expect(count('too_large')).toBeGreaterThanOrEqual(1);
    expect(count('stale')).toBeGreaterThanOrEqual(1);
  });

  it('takes on-chain stats from the contract events only: equal to the contract counters, whatever a seller claims', async () => {
    for (const seller of honest) {
      const peer = snapshot.peers.find((p) => p.peerId === seller.node.peerId)!;
      const expected = await contractView(seller);
      const { channelsClosed, ...rest } = peer.onChainStats;
      expect(rest).toEqual(expected);
      expect(peer.onChainChannelCount).toBe(expected.channelsOpened);
    }
    const alpha = snapshot.peers.find((p) => p.peerId === honest[0]!.node.peerId)!;
    const gamma = snapshot.peers.find((p) => p.peerId === honest[2]!.node.peerId)!;
    expect(gamma.verifications).toEqual({
      onChainChannelCount: 999,
      settledVolumeUsd: '1000000.000000',
    });
    expect(gamma.onChainChannelCount).toBe(0);
    expect(gamma.onChainStats).toMatchObject({
      settledVolumeUsd: '0.000000',
      reputationScore: null,
    });
    expect(alpha.onChainStats).toMatchObject({
      settledVolumeUsd: '0.300000',
      channelsOpened: 2,
      channelsClosed: 1,
      distinctBuyers: 2,
    });
    expect(snapshot.totals).toMatchObject({
      peers: 3,
      services: 3,
      providers: 3,
      channels: 3,
      settledVolumeUsd: '0.600000',
    });
  });

  it('resumes from its cursor after a restart, counting no volume twice', {
    timeout: 90_000,
  }, async () => {
    const before = snapshot.indexer.lastBlock!;
    await running!.stop();
    running = undefined;
    await net.payChannel(buyers[1]!, honest[2]!.node.identity, [70_000n]);
    await net.mine(3);
    url = (await startOne()).url;
    snapshot = await settledSnapshot(url, (await net.chain.contract.blockNumber()) - 2n);
    expect(snapshot.indexer.lastBlock!).toBeGreaterThan(before);
    for (const seller of honest) {
      const peer = snapshot.peers.find((p) => p.peerId === seller.node.peerId)!;
      const { channelsClosed: _closed, ...rest } = peer.onChainStats;
      expect(rest).toEqual(await contractView(seller));
    }
    expect(snapshot.totals.settledVolumeUsd).toBe('0.670000');
  });

  it('feeds `svc network browse --indexer` with real on-chain sorts', async () => {
    const browse = async (sort: string) => {
      const run = await runCli([
        '--data-dir',
        dataDir,
        '--json',
        'network',
        'browse',
        '--indexer',
        url,
        '--sort',
        sort,
      ]);
      expect(run.code).toBe(0);
      return JSON.parse(run.stdout) as BrowseResult;
    };
    const byVolume = await browse('volume');
    expect(byVolume.source).toBe(`indexer:${url}/stats`);
    expect(byVolume.onChainStatsRefreshedAt).toBe(snapshot.indexer.onChainStatsRefreshedAt);
    expect(byVolume).toMatchObject({
      sort: 'volume',
      total: 3,
      filters: { service: null, tags: null },
    });
    expect(byVolume.peers.map((p) => p.reputation.volumeUsd)).toEqual([
      '0.300000',
      '0.300000',
      '0.070000',
    ]);
    const bySessions = await browse('sessions');
    expect(bySessions.peers[0]!.peerId).toBe(honest[0]!.node.peerId);
    expect(bySessions.peers[0]!.reputation.sessions).toBe(2);
    const byScore = await browse('score');
    const scores = byScore.peers.map((p) => p.reputation.score ?? -1);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(byScore.peers[0]!.reputation.score).toBe(
      snapshot.peers.find((p) => p.peerId === byScore.peers[0]!.peerId)!.onChainStats
        .reputationScore,
    );
  });

  it('seeds a buyer cache with network.indexerUrl: records fetched from the sellers themselves', {
    timeout: 60_000,
  }, async () => {
    // No bootstrap: the snapshot is the only way this node can learn of any seller.
    const node = await startLoopbackNode('buyer', { indexerUrl: url });
    const directory = new NetworkPeerDirectory({ node });
    try {
      await directory.start();
      const peers = await waitFor(
        () => {
          const reachable = directory.list().filter((p) => p.reachable);
          return reachable.length === 3 ? reachable : false;
        },
        30_000,
        'three sellers seeded from the indexer',
      );
      for (const peer of peers) {
        const seller = honest.find((s) => s.node.peerId === peer.metadata.peerId)!;
        expect(peer.metadata).toEqual(JSON.parse(new TextDecoder().decode(seller.bytes)));
      }
    } finally {
      await directory.stop();
      await node.stop();
    }
  });

  it('keeps the last good on-chain stats when the RPC is unreachable, and says how old they are', {
    timeout: 60_000,
  }, async () => {
    const good = snapshot;
    await net.chain.anvil.stop();
    await waitFor(
      async () => {
        await running!.indexer.round();
        const now = await stats(url);
        return now.indexer.chainError !== null ? now : false;
      },
      30_000,
      'a snapshot built without the chain',
    ).then((now) => {
      expect(now.indexer.onChainStatsRefreshedAt!).toBeLessThan(now.updatedAt);
      expect(now.indexer.lastBlock).toBe(good.indexer.lastBlock);
      expect(now.totals.settledVolumeUsd).toBe(good.totals.settledVolumeUsd);
    });
    const health = (await (await fetch(`${url}/healthz`)).json()) as {
      chain: { error: string | null; ageSeconds: number };
    };
    expect(health.chain.error).not.toBeNull();
  });
});
