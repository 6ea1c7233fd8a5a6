/** The gateway control secret: `<data-dir>/gateway/control.secret`, hex, mode 0600. */
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDir } from '../../config/index.js';

/** Path of the control secret file. */
export function controlSecretPath(dataDir: string): string {
  return join(dataDir, 'gateway', 'control.secret');
}

/** Reads the control secret, creating it (0600) on first use. */
export function ensureControlSecret(dataDir: string): string {
  const path = controlSecretPath(dataDir);
  ensureDir(join(dataDir, 'gateway'));
  try {
    writeFileSync(path, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  chmodSync(path, 0o600);
  return readFileSync(path, 'utf8').trim();
}
