/**
 * `<data-dir>/network/peers.json`: the verified peer cache, so a restarted buyer can route at
 * once. Records are re-verified on load (signature and schema, not freshness: the background
 * refresh replaces them); anything that fails is dropped.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDir, readTextFile, writeFileAtomic } from '../config/index.js';
import { jsonText, textSlices } from '../http/index.js';
import { shareRecordParts, verifyMetadata } from './metadata/index.js';
import type { KnownPeer } from './types.js';

/** A cached peer plus the libp2p id needed to dial it. */
export interface CachedPeer extends KnownPeer {
  libp2pPeerId: string;
  /** Unix ms when the peer was first found unreachable (cleared on contact). */
  unreachableSince?: number;
}

const FILE_VERSION = 1;

export function peerCachePath(dataDir: string): string {
  return join(dataDir, 'network', 'peers.json');
}

/** Loads and re-verifies the cache; a missing or corrupt file gives an empty list. */
export async function loadPeerCache(dataDir: string): Promise<CachedPeer[]> {
  const path = peerCachePath(dataDir);
  if (!existsSync(path)) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(readTextFile(path));
  } catch {
    return [];
  }
  if (typeof parsed !== 'object' || parsed === null) return [];
  const { version, peers } = parsed as { version?: unknown; peers?: unknown };
  if (version !== FILE_VERSION || !Array.isArray(peers)) return [];
  const out: CachedPeer[] = [];
  for (const entry of peers as Partial<CachedPeer>[]) {
    if (typeof entry?.libp2pPeerId !== 'string' || typeof entry.lastSeenAt !== 'number') continue;
    const verdict = await verifyMetadata(entry.metadata, { now: entry.metadata?.timestamp });
    if (!verdict.ok) continue;
    // The file's records are this function's own parse: their repeated parts can be shared.
    shareRecordParts(verdict.metadata);
    out.push({
      metadata: verdict.metadata,
      reachable: entry.reachable === true,
      lastSeenAt: entry.lastSeenAt,
      addresses: Array.isArray(entry.addresses)
        ? entry.addresses.filter((a) => typeof a === 'string')
        : [],
      libp2pPeerId: entry.libp2pPeerId,
      ...(typeof entry.lastError === 'string' ? { lastError: entry.lastError } : {}),
      ...(typeof entry.unreachableSince === 'number'
        ? { unreachableSince: entry.unreachableSince }
        : {}),
    });
  }
  return out;
}

/** Writes the cache atomically (built and written in pieces, as it is read). */
export function savePeerCache(dataDir: string, peers: CachedPeer[]): void {
  ensureDir(join(dataDir, 'network'));
  const text = `${jsonText({ version: FILE_VERSION, peers }, 2)}\n`;
  writeFileAtomic(peerCachePath(dataDir), textSlices(text));
}
