/**
 * `<data-dir>/network/peers.json`: the verified peer cache, so a restarted buyer can route at
 * once. Records are re-verified on load (signature and schema, not freshness: the background
 * refresh replaces them); anything that fails is dropped.
 */
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { ensureDir, writeFileAtomic } from '../config/index.js';
import { jsonText, textSlices } from '../http/index.js';
import { verifyMetadata } from './metadata/index.js';
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
    parsed = JSON.parse(readText(path));
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

const READ_PIECE_BYTES = 64 * 1024;

/**
 * The file's text, read 64 KiB at a time. `readFileSync` reads a 6 MB cache of 1,000 sellers into
 * one native block; freeing it raises glibc's mmap threshold to 6 MB for the rest of the process,
 * and the buffers of later large answers then stay resident once freed
 * (docs/decisions/155-buyer-memory-with-many-peers.md).
 */
function readText(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(READ_PIECE_BYTES);
    const decoder = new StringDecoder('utf8');
    let text = '';
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer))
      text += decoder.write(buffer.subarray(0, read));
    return text + decoder.end();
  } finally {
    closeSync(fd);
  }
}
