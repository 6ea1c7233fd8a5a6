/**
 * Directories svc creates under its data directory, owner-only. At the bottom floor so the
 * identity, the config and every store share it without importing each other
 * (docs/decisions/182-folder-floors-checked.md).
 */
import { mkdirSync, statSync } from 'node:fs';

/** A path svc needs as a directory is something else (a file); the CLI prints it as one line. */
export class NotADirectoryError extends Error {
  override name = 'NotADirectoryError';
}

/** Creates `dir` (and parents) with owner-only permissions when missing; returns it. */
export function ensureDir(dir: string): string {
  const kind = pathKind(dir);
  if (kind === 'other') throw new NotADirectoryError(`${dir} exists but is not a directory`);
  if (kind === 'missing') mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** Whether `path` is a directory, is missing, or is something else. */
export function pathKind(path: string): 'dir' | 'missing' | 'other' {
  try {
    return statSync(path).isDirectory() ? 'dir' : 'other';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
}
