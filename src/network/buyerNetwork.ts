/**
 * Everything the buyer needs from the network in one call: a node (role buyer), the verified
 * peer directory (persisted in the data dir) and the request transport routed by it.
 */
import type { Hex } from 'viem';
import type { NetworkConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { NetworkPeerDirectory } from './directory.js';
import { createSvcNode, type SvcNode } from './node.js';
import { LibP2pTransport } from './transport.js';
import type { NodeRole } from './types.js';

export interface StartBuyerNetworkOptions {
  identity: { privateKey: Hex };
  config: NetworkConfig;
  /** Where `network/peers.json` is kept; omit for no persistence. */
  dataDir?: string;
  logger?: Logger;
  role?: Extract<NodeRole, 'buyer' | 'client'>;
}

export interface BuyerNetwork {
  node: SvcNode;
  directory: NetworkPeerDirectory;
  transport: LibP2pTransport;
  stop(): Promise<void>;
}

/** Starts the node and the directory (which loads the cache and refreshes in the background). */
export async function startBuyerNetwork(options: StartBuyerNetworkOptions): Promise<BuyerNetwork> {
  const node = await createSvcNode({
    identity: options.identity,
    config: options.config,
    role: options.role ?? 'buyer',
    ...(options.logger ? { logger: options.logger } : {}),
  });
  const directory = new NetworkPeerDirectory({
    node,
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
  });
  try {
    await directory.start();
  } catch (error) {
    await node.stop();
    throw error;
  }
  const transport = new LibP2pTransport({ node, router: directory });
  return {
    node,
    directory,
    transport,
    async stop() {
      await directory.stop();
      await node.stop();
    },
  };
}
