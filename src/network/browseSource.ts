/**
 * Where `svc network browse` gets peers: a running buyer's verified cache
 * (`GET http://127.0.0.1:<buyer.port>/_svc/peers`) when one answers, else the network itself
 * through a short-lived client node that dials `network.bootstrap`, looks up providers and
 * fetches (and verifies) every record.
 */
import { generatePrivateKey } from 'viem/accounts';
import type { NetworkConfig } from '../config/index.js';
import { type Logger, silentLogger } from '../log/index.js';
import type { BrowseInput, CollectedPeers, PeerReputation } from './browse.js';
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

/** A buyer's `/_svc/peers` answer: its URL and the raw entries. */
export interface BuyerPeerList {
  url: string;
  entries: unknown[];
}

/** Reads a running buyer's peer list, or undefined when none answers. */
export async function readBuyerPeers(port: number): Promise<BuyerPeerList | undefined> {
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
  return Array.isArray(list) ? { url, entries: list } : undefined;
}

/** Reputation an entry carries: `reputation: {score, volumeUsd, sessions}` or `reputationScore`. */
function reputationOf(entry: unknown): Partial<PeerReputation> | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const { reputation, reputationScore } = entry as {
    reputation?: unknown;
    reputationScore?: unknown;
  };
  if (typeof reputation === 'object' && reputation !== null)
    return reputation as Partial<PeerReputation>;
  if (typeof reputationScore === 'number') return { score: reputationScore };
  return undefined;
}

function peerIdOf(entry: unknown): string | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const candidate = 'metadata' in entry ? (entry as { metadata: unknown }).metadata : entry;
  const peerId = (candidate as { peerId?: unknown } | null)?.peerId;
  return typeof peerId === 'string' ? peerId : undefined;
}

/** The buyer's list as browse input when it carries the signed records, else undefined. */
export function peersFromBuyerList(list: BuyerPeerList): CollectedPeers | undefined {
  if (!list.entries.every(looksLikePeer)) return undefined;
  return {
    source: `buyer:${list.url}`,
    peers: list.entries.map((entry) => {
      const reputation = reputationOf(entry);
      return reputation ? { ...entry, reputation } : entry;
    }),
  };
}

/** Reads a running buyer's list; undefined when none answers or it lacks the signed records. */
export async function peersFromBuyer(port: number): Promise<CollectedPeers | undefined> {
  const list = await readBuyerPeers(port);
  return list ? peersFromBuyerList(list) : undefined;
}

/** How long the peer list must stay the same before a direct browse answers. */
const STABLE_FOR_MS = 1500;

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
    // Provider records and identify-triggered fetches keep landing for a moment: refresh until
    // the list has stopped growing for a while (bounded by the deadline), so one early answer
    // does not hide the rest of the network.
    let count = directory.list().length;
    let stableSince = Date.now();
    while (Date.now() < deadline && (count === 0 || Date.now() - stableSince < STABLE_FOR_MS)) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      await directory.refresh();
      const now = directory.list().length;
      if (now !== count) {
        count = now;
        stableSince = Date.now();
      }
    }
    const peers = directory.list().filter((peer) => peer.reachable);
    return { source, peers };
  } finally {
    await directory.stop();
    await node.stop();
  }
}

/**
 * The buyer's list when a buyer answers with signed records; when its list has only summaries,
 * the records come from the network and the buyer's reputation scores are attached; with no
 * buyer, the network alone.
 */
export async function collectPeers(options: CollectPeersOptions): Promise<CollectedPeers> {
  const list =
    !options.direct && options.buyerPort !== undefined
      ? await readBuyerPeers(options.buyerPort)
      : undefined;
  if (list) {
    const fromBuyer = peersFromBuyerList(list);
    if (fromBuyer) return fromBuyer;
  }
  const direct = await peersFromNetwork(options.network, options.waitMs, options.logger);
  if (!list) return direct;
  const scores = new Map<string, Partial<PeerReputation>>();
  for (const entry of list.entries) {
    const peerId = peerIdOf(entry);
    const reputation = reputationOf(entry);
    if (peerId !== undefined && reputation !== undefined)
      scores.set(peerId.toLowerCase(), reputation);
  }
  return {
    ...direct,
    source: `${direct.source}+reputation:${list.url}`,
    peers: direct.peers.map((peer) => {
      const reputation = scores.get(peerIdOf(peer) ?? '');
      return reputation ? { ...peer, reputation } : peer;
    }),
  };
}

export type { CollectedPeers };
