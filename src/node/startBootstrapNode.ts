/**
 * `svc network bootstrap` (alias `relay`): a node that answers the DHT so others find each other,
 * and relays for sellers behind NAT (docs/decisions/141-selling-behind-nat.md). It uses the
 * data dir's default identity, so its address stays the same across restarts.
 */
import type { NetworkConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { createSvcNode, type SvcNode } from '../network/index.js';
import type { RunningService } from './service.js';

export interface StartBootstrapNodeOptions {
  identity: { privateKey: `0x${string}` };
  /** The configured network; its bootstrap list is ignored (this node is the bootstrap). */
  network: NetworkConfig;
  logger: Logger;
}

export type BootstrapNode = SvcNode & RunningService;

/** Starts a bootstrap node listening on `network.listen`, announcing `network.announce`. */
export async function startBootstrapNode(
  options: StartBootstrapNodeOptions,
): Promise<BootstrapNode> {
  return createSvcNode({
    identity: options.identity,
    role: 'bootstrap',
    logger: options.logger,
    config: { ...options.network, bootstrap: [] },
  });
}
