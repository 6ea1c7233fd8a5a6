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

export { mirroredSignature } from '../identity/testing.js';
