/** Writes a file so that readers see the old or the new content, never half of it. */
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';

/**
 * Writes `data` to a temporary sibling, then renames it over `path`. A long text can be given as
 * pieces (e.g. `textSlices` of src/http), written one by one, so that it is never copied into one
 * native buffer (docs/decisions/155-buyer-memory-with-many-peers.md).
 */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array | Iterable<string>,
  mode = 0o600,
): void {
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    if (typeof data === 'string' || data instanceof Uint8Array) {
      writeFileSync(temporary, data, { mode, flag: 'wx' });
    } else {
      const fd = openSync(temporary, 'wx', mode);
      try {
        for (const piece of data) {
          const bytes = Buffer.from(piece, 'utf8');
          for (let offset = 0; offset < bytes.length; )
            offset += writeSync(fd, bytes, offset, bytes.length - offset);
        }
      } finally {
        closeSync(fd);
      }
    }
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}
