/** The peer cache file: what is saved loads back, verified, in the same JSON as before. */
import { readFileSync, writeFileSync } from 'node:fs';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { peerRecord } from '../catalog/testing/peerRecord.js';
import { peerIdFromAddress } from '../identity/index.js';
import { removeTempDir, tempDir } from '../testing/index.js';
import { libp2pPeerIdFromIdentity } from './keys.js';
import { signMetadata } from './metadata/index.js';
import { type CachedPeer, loadPeerCache, peerCachePath, savePeerCache } from './peerCacheFile.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) removeTempDir(dir);
});

async function cachedPeer(index: number): Promise<CachedPeer> {
  const privateKey = generatePrivateKey();
  const account = privateKeyToAccount(privateKey);
  const template = peerRecord({
    peerId: peerIdFromAddress(account.address),
    services: Array.from({ length: 3 }, (_, s) => ({
      id: `model-${index}-${s} ☃ 😀`,
      pricing: { inputUsdPerMillion: 1 + s / 10, outputUsdPerMillion: 2 },
    })),
  });
  const { signature: _unsigned, ...unsigned } = template.metadata;
  return {
    metadata: await signMetadata({ ...unsigned, timestamp: 1_000 + index }, account),
    reachable: index % 2 === 0,
    lastSeenAt: 5_000 + index,
    addresses: [`/ip4/127.0.0.1/tcp/${4000 + index}`],
    libp2pPeerId: libp2pPeerIdFromIdentity(privateKey).toString(),
    ...(index % 3 === 0 ? { lastError: 'dial timed out', unreachableSince: 7_000 } : {}),
  };
}

describe('peer cache file', () => {
  it('saves every peer as indented JSON and loads them back verified', async () => {
    const dir = tempDir('svc-peer-cache-');
    dirs.push(dir);
    // More peers than the piecewise threshold, so the file is built element by element.
    const peers = await Promise.all(Array.from({ length: 70 }, (_, i) => cachedPeer(i)));
    savePeerCache(dir, peers);
    const text = readFileSync(peerCachePath(dir), 'utf8');
    expect(text).toBe(`${JSON.stringify({ version: 1, peers }, null, 2)}\n`);
    expect(await loadPeerCache(dir)).toEqual(peers);
  });

  it('drops a record whose signature no longer matches and reads an empty or corrupt file as empty', async () => {
    const dir = tempDir('svc-peer-cache-');
    dirs.push(dir);
    const [good, tampered] = [await cachedPeer(0), await cachedPeer(1)];
    tampered.metadata = { ...tampered.metadata, displayName: 'someone else' };
    savePeerCache(dir, [good, tampered]);
    expect(await loadPeerCache(dir)).toEqual([good]);
    savePeerCache(dir, []);
    expect(readFileSync(peerCachePath(dir), 'utf8')).toBe('{\n  "version": 1,\n  "peers": []\n}\n');
    expect(await loadPeerCache(dir)).toEqual([]);
    writeFileSync(peerCachePath(dir), '{"version": 1, "peers": [');
    expect(await loadPeerCache(dir)).toEqual([]);
  });
});
