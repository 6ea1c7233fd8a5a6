/** Waiting for a running buyer to discover sellers, as the network tests do, and such a buyer. */
import type { ReputationSource } from '../../catalog/index.js';
import { defaultConfig, type SvcConfig } from '../../config/index.js';
import { silentLogger } from '../../log/index.js';
import { randomIdentity } from '../../network/testing/loopback.js';
import { waitFor } from '../../testing/index.js';
import { type RunningBuyerNode, runBuyerNode } from '../runBuyerNode.js';
import { scoreAll } from './testBuyer.js';

/**
 * Asks the buyer at `buyer.url` to refresh its peers (`POST /_svc/peers/refresh`) until `seen`
 * holds, and resolves with what `seen` returned; throws after `timeoutMs` naming `what`.
 */
export function waitForDiscovery<T>(
  buyer: { url: string },
  seen: () => T | undefined | null | false,
  what: string,
  timeoutMs = 45_000,
): Promise<T> {
  return waitFor(
    async () => {
      await fetch(`${buyer.url}/_svc/peers/refresh`, { method: 'POST' });
      return seen();
    },
    timeoutMs,
    what,
  );
}

/**
 * A free-of-charge buyer (`unpaid-dev`, every seller scored 80 unless `reputation` says
 * otherwise) on the loopback `network` in `dataDir`, on a free port, returned once it sees
 * `sellers` reachable sellers. `buyer` replaces the default buyer settings (an audit test's, say).
 */
export async function startUnpaidBuyer(
  network: SvcConfig['network'],
  dataDir: string,
  sellers: number,
  buyer: SvcConfig['buyer'] = defaultConfig().buyer,
  reputation: ReputationSource = scoreAll(80),
): Promise<RunningBuyerNode> {
  const node = await runBuyerNode({
    config: { ...defaultConfig(), network, buyer },
    dataDir,
    identity: randomIdentity(),
    logger: silentLogger(),
    port: 0,
    payments: 'unpaid-dev',
    reputation,
  });
  await waitForDiscovery(
    node,
    () => node.directory.list().filter((peer) => peer.reachable).length >= sellers,
    `${sellers} seller${sellers === 1 ? '' : 's'} discovered`,
  );
  return node;
}
