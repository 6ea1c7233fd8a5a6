/** Writes a file so that readers see the old or the new content, never half of it. */
import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';

/** Writes `data` to a temporary sibling, then renames it over `path`. */
export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): void {
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFileSync(temporary, data, { mode, flag: 'wx' });
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}
