/** The key a tunnel endpoint's libp2p node uses, kept in a file so its id survives restarts. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Hex } from 'viem';
import { generatePrivateKey } from 'viem/accounts';

/** Reads the key at `path`, creating it (mode 0600) the first time. */
export function loadOrCreateKey(path: string): Hex {
  if (existsSync(path)) {
    const text = readFileSync(path, 'utf8').trim();
    if (!/^0x[0-9a-f]{64}$/i.test(text)) throw new TypeError(`${path} does not hold a key`);
    return text as Hex;
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const key = generatePrivateKey();
  writeFileSync(path, `${key}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}
