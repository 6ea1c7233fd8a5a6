/** Test helpers for payments: a buyer/seller pair on a local chain (used by tests and the bench). */
import { removeTempDir, tempDir } from '../testing/index.js';

/** A temporary data directory removed by the returned cleanup. */
export function tempDataDir(prefix: string): { dir: string; remove: () => void } {
  const dir = tempDir(`svc-${prefix}-`);
  return { dir, remove: () => removeTempDir(dir) };
}

/** A mutable clock for tests. */
export function manualClock(start = Date.now()): {
  now: () => number;
  advance: (ms: number) => void;
} {
  let current = start;
  return {
    now: () => current,
    advance: (ms) => {
      current += ms;
    },
  };
}

/** secp256k1's group order. */
const ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * The same signature with `s` mirrored to n - s and the other `v`: viem still recovers the same
 * signer from it; the payments contract refuses it (a high `s`).
 */
export function mirroredSignature(signature: `0x${string}`): `0x${string}` {
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130), 16);
  const mirroredS = (ORDER - s).toString(16).padStart(64, '0');
  return `0x${signature.slice(2, 66)}${mirroredS}${(v === 27 ? 28 : 27).toString(16)}`;
}
