/**
 * `svc gateway start`: the gateway and, unless `gateway.buyerUrl` names a buyer elsewhere, its own
 * buyer in the same process (docs/decisions/180-gateway-runs-its-buyer.md). The buyer keeps its
 * loopback listener (the local proxy, its audits and the gateway's catalog and journal reads);
 * the gateway hands it the text routes as typed calls. Stopped in reverse order of start.
 */

import { join } from 'node:path';
import { inProcessBuyer } from '../buyer/index.js';
import type { SvcConfig } from '../config/index.js';
import { type RunningGateway, type StartGatewayOptions, startGateway } from '../gateway/index.js';
import { IdentityStore } from '../identity/index.js';
import type { Logger } from '../log/index.js';
import { loadOrCreateKey, type RunningGatewayTunnel, startGatewayTunnel } from '../tunnel/index.js';
import { configuredChain } from './configuredChain.js';
import type { RunningService } from './service.js';
import { type PaidBuyerNode, startPaidBuyerNode } from './startBuyerNode.js';

export interface StartGatewayNodeOptions {
  config: SvcConfig;
  dataDir: string;
  logger: Logger;
  env: NodeJS.ProcessEnv;
  version: string;
  /** The buyer's loopback port; 0 = any free one (the local proxy is not offered). */
  buyerPort?: number;
  topups?: StartGatewayOptions['topups'];
  /**
   * A tunnel relay's multiaddr (`svc gateway start --tunnel`): the gateway is also served at the
   * relay's public URL, under the id of the key in <data-dir>/gateway/tunnel.key.
   */
  tunnel?: string;
}

export interface GatewayNode extends RunningService {
  gateway: RunningGateway;
  /** The buyer in this process; undefined when the gateway forwards to gateway.buyerUrl. */
  buyer: PaidBuyerNode | undefined;
  /** Why the in-process buyer runs without payments, when it does. */
  paymentsProblem: string | undefined;
  /** The tunnel to a relay, when `tunnel` was given. */
  tunnel: RunningGatewayTunnel | undefined;
}

/**
 * Starts the gateway, with its own buyer unless config.gateway.buyerUrl is set, and its tunnel
 * when one is asked for; `stop()` stops them in reverse order.
 */
export async function startGatewayNode(options: StartGatewayNodeOptions): Promise<GatewayNode> {
  const started = await startGatewayAndBuyer(options);
  if (options.tunnel === undefined) return { ...started, tunnel: undefined };
  const { config, dataDir, logger } = options;
  let tunnel: RunningGatewayTunnel;
  try {
    tunnel = await startGatewayTunnel({
      relay: options.tunnel,
      gatewayUrl: started.gateway.url,
      tunnelToken: started.gateway.tunnelToken,
      network: config.network,
      privateKey: loadOrCreateKey(join(dataDir, 'gateway', 'tunnel.key')),
      bodyLimitBytes: config.gateway.bodyLimitBytes,
      logger,
    });
  } catch (error) {
    await started.stop();
    throw error;
  }
  return {
    ...started,
    tunnel,
    async stop() {
      await tunnel.stop();
      await started.stop();
    },
  };
}

async function startGatewayAndBuyer(
  options: StartGatewayNodeOptions,
): Promise<Omit<GatewayNode, 'tunnel'>> {
  const { config, dataDir, logger, env } = options;
  const gatewayOptions: StartGatewayOptions = {
    config: config.gateway,
    dataDir,
    logger,
    env,
    ...(options.topups ? { topups: options.topups } : {}),
  };
  if (config.gateway.buyerUrl) {
    const gateway = await startGateway(gatewayOptions);
    return { gateway, buyer: undefined, paymentsProblem: undefined, stop: () => gateway.stop() };
  }
  const identities = new IdentityStore(dataDir, env);
  const chain = configuredChain(config.chain, dataDir);
  const buyer = await startPaidBuyerNode({
    config,
    dataDir,
    identity: identities.loadDefault(),
    identities,
    chain: chain.contract,
    paymentsConfig: config.chain.payments,
    logger,
    version: options.version,
    ...(options.buyerPort !== undefined ? { port: options.buyerPort } : {}),
  });
  let gateway: RunningGateway;
  try {
    gateway = await startGateway({
      ...gatewayOptions,
      buyer: { url: buyer.url, inProcess: inProcessBuyer(buyer.service) },
    });
  } catch (error) {
    await buyer.stop();
    throw error;
  }
  return {
    gateway,
    buyer,
    paymentsProblem: chain.problem ?? buyer.paymentsProblem,
    async stop() {
      await gateway.stop();
      await buyer.stop();
    },
  };
}
