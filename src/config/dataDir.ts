/** The data directory: `--data-dir`, else `SVC_DATA_DIR`, else `~/.svc`. Nothing else is hard-coded. */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathKind } from '../files/index.js';
import { ConfigError } from './ConfigError.js';

/** Resolves the data directory path (does not create it). */
export function resolveDataDir(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = flag ?? env.SVC_DATA_DIR ?? join(homedir(), '.svc');
  const path = resolve(chosen);
  if (pathKind(path) === 'other')
    throw new ConfigError(`data directory ${path} exists but is not a directory`);
  return path;
}
