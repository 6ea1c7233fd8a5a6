/**
 * A small real network in this process: a bootstrap node, sellers of one API format each over a
 * stand-in vendor (test/support/scriptedVendor.ts, test/support/demoVendor.ts), and a buyer that
 * has discovered them all — libp2p on loopback, free offers, every seller scored 80.
 */
import { type RunningBuyerNode, runBuyerNode } from '../../src/buyer/runBuyerNode.js';
import { scoreAll } from '../../src/buyer/testing/testBuyer.js';
import { defaultConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/log/index.js';
import type { SvcNode } from '../../src/network/index.js';
import {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
  waitFor,
} from '../../src/network/testing/loopback.js';
import { type SellerHandle, startSeller } from '../../src/seller/index.js';
import { removeTempDir, tempDir } from '../../src/testing/index.js';

export type SellerProvider = 'openai-chat' | 'openai-responses' | 'anthropic-messages';

export interface NetworkSeller {
  provider: SellerProvider;
  /** The vendor's API root including /v1. */
  baseUrl: string;
  /** Service id -> the vendor's model name and the price (USD per million, input = output). */
  services: Record<string, { upstreamModel: string; usdPerMillion?: number }>;
}

export interface SellerNetwork {
  buyer: RunningBuyerNode;
  /** In the order given. */
  sellers: SellerHandle[];
  /** Stops one seller (as a seller going away would); `stop` leaves it alone then. */
  stopSeller(index: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the network and waits until the buyer reaches every seller. */
export async function startSellerNetwork(specs: NetworkSeller[]): Promise<SellerNetwork> {
  const dataDir = tempDir('svc-network-');
  const bootstrap: SvcNode = await startLoopbackNode('bootstrap');
  const network = loopbackNetworkConfig({ bootstrap: [bootstrap.multiaddrs()[0]!] });
  const sellers: SellerHandle[] = [];
  for (const [i, spec] of specs.entries()) {
    const services = Object.fromEntries(
      Object.entries(spec.services).map(([id, service]) => {
        const price = service.usdPerMillion ?? 0;
        const pricing = { inputUsdPerMillion: price, outputUsdPerMillion: price };
        return [id, { upstreamModel: service.upstreamModel, categories: [], pricing }];
      }),
    );
    sellers.push(
      await startSeller({
        identity: randomIdentity(),
        network,
        seller: {
          displayName: `${spec.provider} seller ${i}`,
          uploadLimitBytes: 1024 * 1024,
          providers: [
            {
              type: spec.provider,
              name: spec.provider,
              baseUrl: spec.baseUrl,
              services,
              defaultPricing: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 },
              maxConcurrency: 16,
            },
          ],
        },
      }),
    );
  }
  const buyer = await runBuyerNode({
    config: { ...defaultConfig(), network },
    dataDir,
    identity: randomIdentity(),
    logger: silentLogger(),
    port: 0,
    reputation: scoreAll(80),
  });
  await waitFor(
    async () => {
      await fetch(`${buyer.url}/_svc/peers/refresh`, { method: 'POST' });
      return buyer.directory.list().filter((peer) => peer.reachable).length === specs.length;
    },
    60_000,
    `${specs.length} sellers discovered`,
  );
  const stopped = new Set<number>();
  const stopSeller = async (index: number) => {
    if (stopped.has(index)) return;
    stopped.add(index);
    await sellers[index]!.stop();
  };
  return {
    buyer,
    sellers,
    stopSeller,
    stop: async () => {
      await buyer.stop();
      for (const index of sellers.keys()) await stopSeller(index);
      await bootstrap.stop();
      removeTempDir(dataDir);
    },
  };
}
