/**
 * `svc tunnel relay`: the relay's libp2p node (where gateways dial in; it serves no DHT), the
 * tunnel protocols on it, and the public HTTP server, bounded as the gateway bounds a client
 * (docs/guide/gateway.md "Gateway"). Stopped in reverse order of start.
 */
import { createServer } from 'node:http';
import type { Hex } from 'viem';
import type { NetworkConfig } from '../config/index.js';
import { API_INGRESS, boundIngress, localUrl } from '../http/index.js';
import type { PeerId } from '../identity/index.js';
import { silentLogger } from '../log/index.js';
import { createSvcNode } from '../network/index.js';
import { type TunnelRelayOptions, tunnelRelay } from '../tunnel/index.js';
import type { RunningService } from './service.js';

export interface StartTunnelRelayNodeOptions extends TunnelRelayOptions {
  /** HTTP interface and port (0 = a free port). */
  host: string;
  port: number;
  /** libp2p settings; `listen` is where gateways dial in. */
  network: NetworkConfig;
  /** The relay node's key (stable: gateways name it in their --tunnel multiaddr). */
  privateKey: Hex;
}

export interface TunnelRelayNode extends RunningService {
  /** Local HTTP URL the relay listens on. */
  url: string;
  publicUrl: string;
  /** libp2p addresses gateways pass to `svc gateway start --tunnel`. */
  multiaddrs(): string[];
  /** Gateways registered now. */
  gateways(): PeerId[];
}

/** Starts a tunnel relay; when any part cannot start, what started is stopped before the error. */
export async function startTunnelRelayNode(
  options: StartTunnelRelayNodeOptions,
): Promise<TunnelRelayNode> {
  const logger = options.logger ?? silentLogger();
  // Checked before anything starts, so a bad URL or proxy list leaves nothing running.
  const relay = tunnelRelay(options);
  const node = await createSvcNode({
    identity: { privateKey: options.privateKey },
    config: { ...options.network, bootstrap: [] },
    // Listens for gateways and serves no DHT: a relay only answers the tunnel protocols.
    role: 'buyer',
    logger,
  });
  const attached = await relay.attach(node).catch(async (error: unknown) => {
    await node.stop();
    throw error;
  });
  const server = createServer((req, res) => attached.handle(req, res));
  // The relay is public: the gateway's own bounds on a client.
  boundIngress(server, API_INGRESS);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
  } catch (error) {
    // A port in use: nothing may be left running behind the error.
    await attached.detach();
    await node.stop();
    throw error;
  }
  return {
    url: localUrl(server, options.host),
    publicUrl: attached.publicUrl,
    multiaddrs: () => node.multiaddrs(),
    gateways: () => attached.gateways(),
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await attached.detach();
      await node.stop();
    },
  };
}
