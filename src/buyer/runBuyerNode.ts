/**
 * The buyer on the real network: a libp2p node (role buyer), the verified peer directory and
 * the libp2p request transport, behind `startBuyer`. Used by `svc buyer start`.
 */
import type { Hex } from 'viem';
import type { ReputationSource } from '../catalog/index.js';
import type { SvcConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import {
  createSvcNode,
  LibP2pTransport,
  NetworkPeerDirectory,
  type SvcNode,
} from '../network/index.js';
import type { BuyerPayments } from './payments.js';
import { type RunningBuyer, startBuyer } from './startBuyer.js';

export interface RunBuyerNodeOptions {
  config: SvcConfig;
  dataDir: string;
  /** The default identity's key: the node's libp2p key and peer id. */
  identity: { privateKey: Hex };
  logger: Logger;
  port?: number;
  payments?: BuyerPayments | 'unpaid-dev';
  reputation?: ReputationSource;
  version?: string;
  channels?: () => unknown[] | Promise<unknown[]>;
}

export interface RunningBuyerNode extends RunningBuyer {
  node: SvcNode;
  directory: NetworkPeerDirectory;
}

/** Starts node, directory, transport and HTTP server; `stop()` stops them in reverse order. */
export async function runBuyerNode(options: RunBuyerNodeOptions): Promise<RunningBuyerNode> {
  const node = await createSvcNode({
    identity: options.identity,
    config: options.config.network,
    role: 'buyer',
    logger: options.logger,
  });
  const directory = new NetworkPeerDirectory({ node, dataDir: options.dataDir });
  try {
    await directory.start();
    const transport = new LibP2pTransport({ node, router: directory });
    const buyer = await startBuyer({
      config: options.config.buyer,
      dataDir: options.dataDir,
      directory,
      transport,
      logger: options.logger,
      ...(options.port !== undefined ? { port: options.port } : {}),
      ...(options.payments ? { payments: options.payments } : {}),
      ...(options.reputation ? { reputation: options.reputation } : {}),
      ...(options.version ? { version: options.version } : {}),
      ...(options.channels ? { channels: options.channels } : {}),
    });
    return {
      ...buyer,
      node,
      directory,
      stop: async () => {
        await buyer.stop();
        await directory.stop();
        await node.stop();
      },
    };
  } catch (error) {
    await directory.stop().catch(() => undefined);
    await node.stop().catch(() => undefined);
    throw error;
  }
}
