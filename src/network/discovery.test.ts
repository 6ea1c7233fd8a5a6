import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { peerIdFromAddress } from '../identity/index.js';
import { removeTempDir, tempDir } from '../testing/index.js';
import { type Announcer, startAnnouncing } from './announce.js';
import { NetworkPeerDirectory } from './directory.js';
import { encodeMetadata, signMetadata } from './metadata/index.js';
import type { SvcNode } from './node.js';
import { startLoopbackNode, type TestIdentity, waitFor } from './testing/loopback.js';
import type { PeerMetadata } from './types.js';

type Node = SvcNode & { identity: TestIdentity };

async function record(node: Node, price: number, load = 0): Promise<PeerMetadata> {
  return signMetadata(
    {
      peerId: peerIdFromAddress(node.identity.account.address),
      version: 1,
      displayName: `seller ${node.peerId.slice(0, 6)}`,
      providers: [
        {
          provider: 'demo',
          services: ['demo-chat'],
          defaultPricing: { inputUsdPerMillion: price, outputUsdPerMillion: price },
          maxConcurrency: 4,
          currentLoad: load,
        },
      ],
      capabilities: { uploadLimitBytes: 1024, demo: true },
      timestamp: Date.now(),
    },
    node.identity.account,
  );
}

/** Refreshes `directory` until it lists `peerId` as reachable. */
function listedBy(directory: NetworkPeerDirectory, peerId: string): Promise<boolean> {
  return waitFor(
    async () => {
      await directory.refresh();
      return directory.get(peerId)?.reachable;
    },
    30_000,
    'seller listed',
  );
}

describe('discovery on loopback', () => {
  let bootstrap: Node;
  const sellers: { node: Node; announcer: Announcer; bytes: Uint8Array }[] = [];
  let buyer: Node;
  let directory: NetworkPeerDirectory;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = tempDir('svc-discovery-');
    bootstrap = await startLoopbackNode('bootstrap');
    const bootstrapAddr = bootstrap.multiaddrs()[0]!;
    for (let i = 0; i < 3; i++) {
      const node = await startLoopbackNode('seller', { bootstrap: [bootstrapAddr] });
      const entry = {
        node,
        bytes: encodeMetadata(await record(node, i + 1)),
      } as (typeof sellers)[number];
      entry.announcer = await startAnnouncing(node, () => entry.bytes);
      sellers.push(entry);
    }
    buyer = await startLoopbackNode('buyer', { bootstrap: [bootstrapAddr] });
    directory = new NetworkPeerDirectory({ node: buyer, dataDir });
    await directory.start();
  });

  afterAll(async () => {
    await directory?.stop();
    for (const seller of sellers) {
      await seller.announcer.stop();
      await seller.node.stop();
    }
    await buyer?.stop();
    await bootstrap?.stop();
    removeTempDir(dataDir);
  });

  it('finds every seller with verified metadata', { timeout: 60_000 }, async () => {
    await waitFor(
      async () => {
        await directory.refresh();
        return directory.list().filter((p) => p.reachable).length === 3;
      },
      30_000,
      'three sellers',
    );
    const ids = directory
      .list()
      .map((p) => p.metadata.peerId)
      .sort();
    expect(ids).toEqual(sellers.map((s) => s.node.peerId).sort());
    expect(directory.status()).toMatchObject({ peerCount: 3, reachablePeerCount: 3 });
    expect(directory.health().status).toBe('ok');
  });

  it('sees a price change after a refresh', async () => {
    const seller = sellers[0]!;
    seller.bytes = encodeMetadata(await record(seller.node, 7, 2));
    await directory.refresh();
    const peer = directory.get(seller.node.peerId)!;
    expect(peer.metadata.providers[0]!.defaultPricing.inputUsdPerMillion).toBe(7);
    expect(peer.metadata.providers[0]!.currentLoad).toBe(2);
  });

  it('rejects and counts a record signed by another key, and does not route to it', async () => {
    const seller = sellers[1]!;
    const foreign = await record(sellers[2]!.node, 1);
    seller.bytes = encodeMetadata(foreign);
    await directory.refresh();
    expect(directory.get(seller.node.peerId)?.reachable).toBe(false);
    expect(directory.rejections().wrong_peer).toBeGreaterThanOrEqual(1);
    seller.bytes = encodeMetadata(await record(seller.node, 2));
    await directory.refresh();
    expect(directory.get(seller.node.peerId)?.reachable).toBe(true);
  });

  it('persists the cache so a restarted directory routes at once', async () => {
    await directory.stop();
    const again = new NetworkPeerDirectory({ node: buyer, dataDir });
    // Not started: only the file is loaded.
    await again.start();
    expect(again.list().length).toBe(3);
    await again.stop();
    directory = new NetworkPeerDirectory({ node: buyer, dataDir });
    await directory.start();
  });

  it('rejects and counts an oversized record', async () => {
    const seller = sellers[1]!;
    const good = seller.bytes;
    seller.bytes = new Uint8Array(70 * 1024).fill(32);
    await directory.refresh();
    expect(directory.get(seller.node.peerId)?.reachable).toBe(false);
    expect(directory.rejections().too_large).toBeGreaterThanOrEqual(1);
    seller.bytes = good;
    await directory.refresh();
    expect(directory.get(seller.node.peerId)?.reachable).toBe(true);
  });

  it('lists an unreachable seller again as soon as a connection to it opens', async () => {
    // Rechecks far away: only the connection can bring it back within this test.
    const watching = new NetworkPeerDirectory({ node: buyer, rechecks: { firstMs: 600_000 } });
    const back: string[] = [];
    watching.onBack((peerId) => back.push(peerId));
    await watching.start();
    try {
      const seller = sellers[0]!;
      await listedBy(watching, seller.node.peerId);
      await buyer.libp2p.hangUp(seller.node.libp2pPeerId);
      watching.markUnreachable(seller.node.peerId, 'dial failed');
      expect(watching.get(seller.node.peerId)?.reachable).toBe(false);
      const changes = watching.status().changes;
      await buyer.libp2p.dial(seller.node.libp2pPeerId);
      expect(watching.get(seller.node.peerId)).toMatchObject({ reachable: true });
      expect(watching.get(seller.node.peerId)?.lastError).toBeUndefined();
      expect(watching.status().changes).toBeGreaterThan(changes!);
      expect(back).toContain(seller.node.peerId);
    } finally {
      await watching.stop();
    }
  });

  it('ignores the verdict of an attempt begun before the seller was seen alive again', async () => {
    const seller = sellers[0]!;
    const route = directory.route(seller.node.peerId)!;
    // A fresh record arrives while the attempt on `route` is failing.
    await directory.refresh();
    directory.markUnreachable(seller.node.peerId, 'stale: dial failed', route);
    expect(directory.get(seller.node.peerId)?.reachable).toBe(true);
    directory.markUnreachable(
      seller.node.peerId,
      'dial failed',
      directory.route(seller.node.peerId),
    );
    expect(directory.get(seller.node.peerId)).toMatchObject({
      reachable: false,
      lastError: 'dial failed',
    });
    await directory.refresh();
  });

  it('rechecks an unreachable seller on its own and lists it again when it answers', async () => {
    const watching = new NetworkPeerDirectory({ node: buyer, rechecks: { firstMs: 50 } });
    await watching.start();
    try {
      const seller = sellers[0]!;
      await listedBy(watching, seller.node.peerId);
      watching.markUnreachable(seller.node.peerId, 'dial failed');
      // No refresh: the recheck fetches its record again.
      await waitFor(
        () => watching.get(seller.node.peerId)?.reachable,
        10_000,
        'listed again by a recheck',
      );
    } finally {
      await watching.stop();
    }
  });

  it('marks a seller that disappears unreachable, then drops it after the TTL', async () => {
    let clock = Date.now();
    await directory.stop();
    directory = new NetworkPeerDirectory({ node: buyer, dataDir, now: () => clock });
    await directory.start();
    const seller = sellers.pop()!;
    await seller.announcer.stop();
    await seller.node.stop();
    await directory.refresh();
    expect(directory.get(seller.node.peerId)?.reachable).toBe(false);
    expect(directory.get(seller.node.peerId)?.lastError).toBeTruthy();
    clock += (buyer.config.peerTtlSeconds + 1) * 1000;
    await directory.refresh();
    expect(directory.get(seller.node.peerId)).toBeUndefined();
    expect(directory.list().length).toBe(2);
  });
});

describe('bootstrap down', () => {
  it('reports no peers reachable instead of hanging', async () => {
    const ghost = await startLoopbackNode('bootstrap');
    const address = ghost.multiaddrs()[0]!;
    await ghost.stop();
    const buyer = await startLoopbackNode('buyer', { bootstrap: [address] });
    const directory = new NetworkPeerDirectory({ node: buyer });
    try {
      await directory.start();
      await directory.refresh();
      expect(directory.list()).toEqual([]);
      expect(directory.health()).toMatchObject({ status: 'no_peers_reachable' });
      expect(directory.health().message).toContain(address);
    } finally {
      await directory.stop();
      await buyer.stop();
    }
  });
});
