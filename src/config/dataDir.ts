/** The data directory: `--data-dir`, else `SVC_DATA_DIR`, else `~/.svc`. Nothing else is hard-coded. */
import { mkdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError } from './ConfigError.js';

/** Resolves the data directory path (does not create it). */
export function resolveDataDir(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = flag ?? env.SVC_DATA_DIR ?? join(homedir(), '.svc');
  const path = resolve(chosen);
  const kind = statKind(path);
  if (kind === 'other')
    throw new ConfigError(`data directory ${path} exists but is not a directory`);
  return path;
}

/** Creates `dir` (and parents) with owner-only permissions when missing; returns it. */
export function ensureDir(dir: string): string {
  const kind = statKind(dir);
  if (kind === 'other') throw new ConfigError(`${dir} exists but is not a directory`);
  if (kind === 'missing') mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

function statKind(path: string): 'dir' | 'missing' | 'other' {
  try {
    return statSync(path).isDirectory() ? 'dir' : 'other';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
}
