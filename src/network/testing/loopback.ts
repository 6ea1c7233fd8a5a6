/** Helpers for tests and benchmarks: svc nodes on 127.0.0.1 with fresh keys. */

import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { NetworkConfig } from '../../config/index.js';
import { createSvcNode, type SvcNode } from '../node.js';
import type { NodeRole } from '../types.js';

/** Network config for loopback tests: port 0, fast refresh. */
export function loopbackNetworkConfig(overrides: Partial<NetworkConfig> = {}): NetworkConfig {
  return {
    bootstrap: [],
    listen: ['/ip4/127.0.0.1/tcp/0'],
    announce: [],
    dhtProtocol: '/svc/kad/1.0.0',
    refreshIntervalSeconds: 300,
    peerTtlSeconds: 3600,
    requestHeadTimeoutSeconds: 300,
    requestIdleTimeoutSeconds: 300,
    requestTotalTimeoutSeconds: 3600,
    requestStreams: true,
    ...overrides,
  };
}

export interface TestIdentity {
  privateKey: Hex;
  account: ReturnType<typeof privateKeyToAccount>;
}

/** A fresh random identity. */
export function randomIdentity(): TestIdentity {
  const privateKey = generatePrivateKey();
  return { privateKey, account: privateKeyToAccount(privateKey) };
}

/** Starts a node with a fresh key on loopback. */
export async function startLoopbackNode(
  role: NodeRole,
  overrides: Partial<NetworkConfig> = {},
  identity: TestIdentity = randomIdentity(),
): Promise<SvcNode & { identity: TestIdentity }> {
  const node = await createSvcNode({ identity, role, config: loopbackNetworkConfig(overrides) });
  return Object.assign(node, { identity });
}

export { waitFor } from '../../testing/index.js';
