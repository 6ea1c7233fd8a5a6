/**
 * One peer of the hole-punching test (src/network/holePunch.netns.test.ts), run inside a network
 * namespace: `relay` (bootstrap node serving relay reservations), `seller` (behind NAT: TCP on its
 * private address plus `/p2p-circuit`) or `buyer` (behind another NAT: finds the seller, sends a
 * request over the relay, waits for DCUtR to upgrade the connection, sends another, then
 * optionally times `rounds` more). Seller and buyer punch from TCP port 4002 when the caller
 * sets SVC_HOLE_PUNCH_PORT. Every result is one JSON line on stdout.
 *
 *   netnsPeer.ts relay <own address> | seller <relay multiaddr>
 *              | buyer <relay multiaddr> <seller peer id> [rounds]
 */
import { performance } from 'node:perf_hooks';
import { HOLE_PUNCH_PORT_ENV, randomIdentity } from '../../network/testing/index.js';

const [role, bootstrap = '', sellerArg = '', roundsArg = '0'] = process.argv.slice(2);
const rounds = Number(roundsArg);
const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

async function main(): Promise<void> {
  const { createSvcNode, describeReachability, LibP2pTransport, NetworkPeerDirectory } =
    await import('../../network/index.js');
  const { loopbackNetworkConfig } = await import('../../network/testing/index.js');
  const listen = ['/ip4/0.0.0.0/tcp/4001'];
  if (role === 'relay') {
    // libp2p reports a public listen address only once AutoNAT confirms it; say it outright.
    const announce = [`/ip4/${bootstrap}/tcp/4001`];
    const node = await createSvcNode({
      identity: randomIdentity(),
      role: 'bootstrap',
      config: loopbackNetworkConfig({ listen, announce }),
    });
    print({ multiaddrs: node.multiaddrs() });
  } else if (role === 'seller') {
    const { startSeller } = await import('../../seller/index.js');
    const seller = await startSeller({
      identity: randomIdentity(),
      network: loopbackNetworkConfig({
        listen: [...listen, '/p2p-circuit'],
        bootstrap: [bootstrap],
      }),
      seller: {
        displayName: 'behind nat',
        uploadLimitBytes: 1024 * 1024,
        providers: [
          {
            type: 'demo',
            services: { 'demo-chat': { categories: [] } },
            defaultPricing: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 },
            maxConcurrency: 8,
          },
        ],
      },
    });
    for (;;) {
      const reachability = describeReachability(seller.node.libp2p);
      if (reachability.mode === 'relayed') {
        print({ peerId: seller.node.peerId, reachability });
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } else if (role === 'buyer') {
    const node = await createSvcNode({
      identity: randomIdentity(),
      role: 'buyer',
      config: loopbackNetworkConfig({ listen, bootstrap: [bootstrap] }),
    });
    const directory = new NetworkPeerDirectory({ node });
    const sellerId = sellerArg;
    // Every connection to the seller, in the order they open: the relayed one comes first.
    const opened: { peer: string; address: string }[] = [];
    node.libp2p.addEventListener('connection:open', ({ detail }) => {
      opened.push({ peer: detail.remotePeer.toString(), address: detail.remoteAddr.toString() });
    });
    const deadline = Date.now() + 60_000;
    while (!directory.get(sellerId)?.reachable && Date.now() < deadline) {
      await directory.refresh();
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const transport = new LibP2pTransport({ node, router: directory });
    const ask = async () => {
      const response = await transport.request(sellerId, {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json' },
        body: new TextEncoder().encode(
          JSON.stringify({ model: 'demo-chat', messages: [{ role: 'user', content: 'hi' }] }),
        ),
      });
      let bytes = 0;
      for await (const chunk of response.body) bytes += chunk.byteLength;
      return { status: response.status, bytes };
    };
    const connections = () =>
      node.libp2p
        .getConnections()
        .filter((c) => c.remotePeer.equals(directory.route(sellerId)?.libp2pPeerId))
        .map((c) => c.remoteAddr.toString());
    const first = await ask();
    // Without a hole-punch port nothing upgrades: the relayed path is what gets measured.
    const upgradeBy = Date.now() + (process.env[HOLE_PUNCH_PORT_ENV] ? 20_000 : 0);
    while (!connections().some((a) => !a.includes('/p2p-circuit')) && Date.now() < upgradeBy) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const second = await ask();
    // Optional: the p50 of `rounds` more round trips on whatever connection is in use now.
    const durations: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const start = performance.now();
      await ask();
      durations.push(performance.now() - start);
    }
    durations.sort((a, b) => a - b);
    const p50Ms = durations.length > 0 ? durations[Math.floor(durations.length / 2)] : undefined;
    const seller = directory.route(sellerId)?.libp2pPeerId.toString();
    const toSeller = opened.filter((c) => c.peer === seller).map((c) => c.address);
    print({ first, opened: toSeller, second, after: connections(), p50Ms });
    process.exit(0);
  }
}

main().catch((error: unknown) => {
  print({ error: error instanceof Error ? error.message : String(error) });
  process.exit(1);
});
