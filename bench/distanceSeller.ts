/**
 * The far seller of bench/distance.bench.ts and what the bench does to its connection: a seller
 * that announces only the relay's address, waiting until the buyer lists it, and cutting the
 * buyer's connection to it so that the next request dials again.
 */
import { KEEP_ALIVE, type PeerId as Libp2pPeerId } from '@libp2p/interface';
import { peerIdFromString } from '@libp2p/peer-id';
import type { RunningBuyerNode } from '../src/buyer/runBuyerNode.js';
import {
  loopbackNetworkConfig,
  type TestIdentity,
  waitFor,
} from '../src/network/testing/loopback.js';
import { type SellerHandle, startSeller } from '../src/seller/index.js';
import type { FakeUpstream } from '../src/seller/testing/index.js';
import type { DelayRelay } from './delayRelay.js';
import { MODEL } from './distanceWarm.js';

/** The tag `@libp2p/kad-dht` puts on its closest peers. */
const KEEP_ALIVE_KAD = `${KEEP_ALIVE}-kad-dht`;

function sellerConfig(upstream: FakeUpstream) {
  return {
    displayName: 'far seller',
    uploadLimitBytes: 1024 * 1024,
    providers: [
      {
        type: 'openai-chat' as const,
        baseUrl: upstream.baseUrl,
        services: { [MODEL]: { categories: [] } },
        defaultPricing: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 },
        maxConcurrency: 64,
      },
    ],
  };
}

interface Far {
  seller: SellerHandle;
  start(): Promise<SellerHandle>;
}

/** A seller listening on `port`, announcing only the relay's address. */
export function farSeller(
  identity: TestIdentity,
  port: number,
  relay: DelayRelay,
  bootstrap: string,
  upstream: FakeUpstream,
): Far {
  const far: Far = {
    seller: undefined as unknown as SellerHandle,
    start: async () => {
      far.seller = await startSeller({
        identity,
        network: loopbackNetworkConfig({
          bootstrap: [bootstrap],
          listen: [`/ip4/127.0.0.1/tcp/${port}`],
          announce: [`/ip4/127.0.0.1/tcp/${relay.port}`],
        }),
        seller: sellerConfig(upstream),
      });
      return far.seller;
    },
  };
  return far;
}

export async function listed(buyer: RunningBuyerNode, peerId: string): Promise<void> {
  await waitFor(
    async () => {
      const body = (await (await fetch(`${buyer.url}/_svc/peers`)).json()) as {
        peers: { peerId: string; reachable: boolean }[];
      };
      return body.peers.some((peer) => peer.peerId === peerId && peer.reachable);
    },
    30_000,
    'seller listed',
  );
}

/**
 * Waits until the record fetch that every new connection starts (on identify) is done: cutting
 * the connection under it would fail the fetch, and mark the seller unreachable for a moment.
 */
export async function settled(buyer: RunningBuyerNode, peerId: string): Promise<void> {
  const connectedAt = Math.max(
    0,
    ...buyer.node.libp2p
      .getConnections(peerIdFromString(buyer.directory.route(peerId)!.libp2pPeerId.toString()))
      .map((c) => c.timeline.open),
  );
  // A record fetched within the last minute is not fetched again (src/network/directory.ts):
  // then no fetch runs, and 300 ms is longer than any fetch here takes.
  await waitFor(
    () =>
      (buyer.directory.get(peerId)?.lastSeenAt ?? 0) >= connectedAt ||
      Date.now() - connectedAt > 300,
    10_000,
    'record fetched on the new connection',
  );
}

/**
 * Closes the buyer's connections to the seller and keeps them closed: the DHT tags its closest
 * peers (in a small network, every seller) keep-alive, and libp2p redials those at once.
 */
export async function cutConnection(buyer: RunningBuyerNode, peer: Libp2pPeerId): Promise<void> {
  await buyer.node.libp2p.peerStore
    .merge(peer, { tags: { [KEEP_ALIVE_KAD]: undefined } })
    .catch(() => undefined);
  await buyer.node.libp2p.hangUp(peer);
}
