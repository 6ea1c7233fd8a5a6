/** What the buyer's directory says about the network's health (`/_svc/status`, the CLI). */
import type { SvcNode } from './node.js';
import { describeReachability, type Reachability } from './reachability.js';

/** Network health for `/_svc/status` and the CLI. */
export interface DirectoryHealth {
  status: 'ok' | 'no_peers_reachable';
  message: string;
  connections: number;
  /** How this node itself is reachable (public, relayed via whom, hole-punched peers). */
  reachableAs?: Reachability;
}

/**
 * Says plainly when nothing on the network answers (e.g. the bootstrap is down), given how many
 * known sellers are reachable.
 */
export function directoryHealth(node: SvcNode, reachable: number): DirectoryHealth {
  const connections = node.libp2p.getConnections().length;
  if (connections === 0 && reachable === 0) {
    const bootstrap = node.config.bootstrap;
    return {
      status: 'no_peers_reachable',
      message:
        bootstrap.length === 0
          ? 'no peers reachable: network.bootstrap is empty, so this node knows nobody'
          : `no peers reachable: none of the ${bootstrap.length} bootstrap address(es) answered (${bootstrap.join(', ')})`,
      connections,
      reachableAs: describeReachability(node.libp2p),
    };
  }
  return {
    status: 'ok',
    message: `${connections} connection(s), ${reachable} reachable seller(s)`,
    connections,
    reachableAs: describeReachability(node.libp2p),
  };
}
