/** The one temporary-directory helper of the tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Creates a fresh directory under the OS temp dir and returns its path. */
export function tempDir(prefix = 'svc-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Deletes a directory made by `tempDir` and everything in it (no error when it is gone). */
export function removeTempDir(path: string): void {
  rmSync(path, { recursive: true, force: true });
}
