/**
 * A seller that crashes and comes back is served again at once (docs/guide/failures.md): a real seller process is killed with SIGKILL, fails the requests sent meanwhile, and is
 * started again with the same identity at the same address. The buyer finds it back on its own
 * (no refresh asked, the background refresh is minutes away), forgets the cool-down its
 * connection failures earned, and serves the first request after it is listed again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningBuyerNode, runBuyerNode } from '../src/buyer/runBuyerNode.js';
import { waitForDiscovery } from '../src/buyer/testing/discovery.js';
import { scoreAll } from '../src/buyer/testing/testBuyer.js';
import { defaultConfig } from '../src/config/index.js';
import { freePort } from '../src/devnet/index.js';
import { silentLogger } from '../src/log/index.js';
import type { SvcNode } from '../src/network/index.js';
import {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
  waitFor,
} from '../src/network/testing/loopback.js';
import { removeTempDir, tempDir } from '../src/testing/index.js';
import { SellerProcess } from './support/sellerProcess.js';

const MODEL = 'restart-demo';

interface PeerView {
  peerId: string;
  reachable: boolean;
  coolingDown: boolean;
  recentFailures: number;
}

describe('a seller killed and restarted with the same identity', () => {
  let dir: string;
  let bootstrap: SvcNode;
  let buyer: RunningBuyerNode;
  let seller: SellerProcess;

  beforeAll(async () => {
    dir = tempDir('svc-seller-restart-');
    bootstrap = await startLoopbackNode('bootstrap');
    const bootstrapAddress = bootstrap.multiaddrs()[0]!;
    const config = defaultConfig();
    buyer = await runBuyerNode({
      config: {
        ...config,
        // The background refresh stays at its default (minutes): only the buyer's own rechecks
        // can find the seller back within this test.
        network: loopbackNetworkConfig({ bootstrap: [bootstrapAddress] }),
        // No audit requests of the buyer's own: every request to the seller is one sent here.
        buyer: { ...config.buyer, audit: { ...config.buyer.audit, enabled: false } },
      },
      dataDir: tempDir('svc-seller-restart-buyer-'),
      identity: randomIdentity(),
      logger: silentLogger(),
      port: 0,
      payments: 'unpaid-dev',
      reputation: scoreAll(80),
    });
    seller = new SellerProcess({
      dataDir: dir,
      port: await freePort(),
      bootstrap: [bootstrapAddress],
      seller: {
        displayName: 'restarting seller',
        uploadLimitBytes: 65_536,
        providers: [
          {
            type: 'demo',
            services: { [MODEL]: { categories: ['chat'] } },
            defaultPricing: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 },
            maxConcurrency: 8,
          },
        ],
      },
    });
    const peerId = await seller.start();
    await waitForDiscovery(buyer, () => buyer.directory.get(peerId)?.reachable, 'seller listed');
  }, 120_000);

  afterAll(async () => {
    await seller?.kill();
    await buyer?.stop();
    await bootstrap?.stop();
    removeTempDir(dir);
  });

  const ask = () =>
    fetch(`${buyer.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'still there?' }] }),
    });
  const peerView = async (): Promise<PeerView> => {
    const body = (await (await fetch(`${buyer.url}/_svc/peers`)).json()) as { peers: PeerView[] };
    return body.peers.find((peer) => peer.peerId === seller.peerId)!;
  };

  it('is served by the first request after it is listed again', async () => {
    expect((await ask()).status).toBe(200);

    await seller.kill();
    // Requests sent while it is down fail before any byte: each dials it (it is the only seller
    // of the model, so its unreachable mark does not stop a fresh try) and fails
    // (`peer_unreachable`, a connection failure); `model_not_found` would only come if it were
    // excluded. Both are 502 with nothing delivered.
    const whileDown = await Promise.all([ask(), ask(), ask()]);
    let dialFailures = 0;
    for (const reply of whileDown) {
      expect(reply.status).toBe(502);
      const { code } = ((await reply.json()) as { error: { code: string } }).error;
      expect(['peer_unreachable', 'model_not_found']).toContain(code);
      if (code === 'peer_unreachable') dialFailures++;
    }
    expect(dialFailures).toBeGreaterThan(0);
    // Three connection failures in a row put a seller in a cool-down; how many of the requests
    // above got to dial depends on timing, so the rest are recorded here as the transport would.
    for (let i = dialFailures; i < 3; i++) {
      buyer.service.health.recordFailure(seller.peerId, 'connection');
    }
    expect(await peerView()).toMatchObject({ reachable: false, coolingDown: true });

    await seller.start();
    const listed = await waitFor(
      async () => {
        const view = await peerView();
        return view.reachable ? view : undefined;
      },
      30_000,
      'the restarted seller listed again without a refresh',
    );
    // Back means the connection failures no longer count against it.
    expect(listed.coolingDown).toBe(false);
    const first = await ask();
    expect(first.status).toBe(200);
    expect(first.headers.get('x-svc-peer-id')).toBe(seller.peerId);
  }, 120_000);
});
