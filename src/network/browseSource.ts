/**
 * Where `svc network browse` gets peers: a running buyer's verified cache
 * (`GET http://127.0.0.1:<buyer.port>/_svc/peers`) when one answers, else the network itself
 * through a short-lived client node that dials `network.bootstrap`, looks up providers and
 * fetches (and verifies) every record.
 */
import { generatePrivateKey } from 'viem/accounts';
import type { NetworkConfig } from '../config/index.js';
import { type Logger, silentLogger } from '../log/index.js';
import type { BrowseInput } from './browse.js';
import { NetworkPeerDirectory } from './directory.js';
import { createSvcNode } from './node.js';

export interface CollectPeersOptions {
  network: NetworkConfig;
  /** Port of the local buyer; undefined skips it. */
  buyerPort?: number;
  /** Skip the buyer and ask the network directly. */
  direct?: boolean;
  /** How long to look for peers on the network. */
  waitMs?: number;
  logger?: Logger;
}

export interface CollectedPeers {
  source: string;
  peers: BrowseInput[];
  /** Said to the user when nothing could be reached. */
  problem?: string;
}

function looksLikePeer(value: unknown): value is BrowseInput {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = 'metadata' in value ? (value as { metadata: unknown }).metadata : value;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof (candidate as { peerId?: unknown }).peerId === 'string' &&
    Array.isArray((candidate as { providers?: unknown }).providers)
  );
}

/** Reads a running buyer's peer list, or undefined when none answers. */
export async function peersFromBuyer(port: number): Promise<CollectedPeers | undefined> {
  const url = `http://127.0.0.1:${port}/_svc/peers`;
  let body: unknown;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1500) });
    if (!response.ok) return undefined;
    body = await response.json();
  } catch {
    return undefined;
  }
  const list = Array.isArray(body)
    ? body
    : typeof body === 'object' && body !== null
      ? ((body as { peers?: unknown; data?: unknown }).peers ?? (body as { data?: unknown }).data)
      : undefined;
  if (!Array.isArray(list)) return undefined;
  return { source: `buyer:${url}`, peers: list.filter(looksLikePeer) };
}

/** Asks the network directly with a throwaway client node. */
export async function peersFromNetwork(
  network: NetworkConfig,
  waitMs = 8000,
  logger: Logger = silentLogger(),
): Promise<CollectedPeers> {
  const source = 'network:direct';
  if (network.bootstrap.length === 0) {
    return {
      source,
      peers: [],
      problem:
        'no peers reachable: network.bootstrap is empty (set it in the config or SVC_BOOTSTRAP)',
    };
  }
  // A fresh key: browsing needs no identity and must not create one.
  const node = await createSvcNode({
    identity: { privateKey: generatePrivateKey() },
    config: network,
    role: 'client',
    logger,
  });
  const directory = new NetworkPeerDirectory({ node, lookupTimeoutMs: Math.min(waitMs, 10_000) });
  try {
    const connected = await node.dialBootstrap();
    if (connected === 0) {
      return { source, peers: [], problem: directory.health().message };
    }
    await directory.start();
    const deadline = Date.now() + waitMs;
    await directory.refresh();
    // Identify-triggered fetches may still be landing; give small networks a moment.
    while (directory.list().length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      await directory.refresh();
    }
    const peers = directory.list().filter((peer) => peer.reachable);
    return { source, peers };
  } finally {
    await directory.stop();
    await node.stop();
  }
}

/** The buyer's list when a buyer answers, else the network directly. */
export async function collectPeers(options: CollectPeersOptions): Promise<CollectedPeers> {
  if (!options.direct && options.buyerPort !== undefined) {
    const fromBuyer = await peersFromBuyer(options.buyerPort);
    if (fromBuyer) return fromBuyer;
  }
  return peersFromNetwork(options.network, options.waitMs, options.logger);
}
