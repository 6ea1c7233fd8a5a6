import {
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTempDir, tempDir } from '../testing/index.js';
import { IdentityStore } from './IdentityStore.js';
import { parsePeerId } from './peerId.js';

const KEY_A = '0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const ADDRESS_A = '0x2c7536e3605d9c16a7a3d7b1898e529396a65c23';

let dataDir: string;
beforeEach(() => {
  dataDir = tempDir('svc-identity-');
});
afterEach(() => removeTempDir(dataDir));

/** Every file under the data dir with its content, to prove a failed command changed nothing. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name);
      out[path] = readFileSync(path, 'utf8');
    }
  }
  return out;
}

describe('default identity', () => {
  it('is created on first use with mode 0600 and stays the same', () => {
    const store = new IdentityStore(dataDir);
    const first = store.loadDefault();
    const path = join(dataDir, 'identity.key');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(first.record.peerId).toMatch(/^[0-9a-f]{40}$/);
    expect(first.record.address.toLowerCase()).toBe(`0x${first.record.peerId}`);
    expect(new IdentityStore(dataDir).loadDefault().record.address).toBe(first.record.address);
  });
});

describe('named identities', () => {
  it('creates a stored identity, lists it, loads it, archives it on remove', () => {
    const store = new IdentityStore(dataDir);
    const created = store.create('team-a');
    expect(created.source).toBe('stored');
    expect(statSync(join(dataDir, 'identities', 'team-a.key')).mode & 0o777).toBe(0o600);
    expect(store.list().map((i) => i.name)).toEqual(['default', 'team-a']);
    expect(store.load('team-a').record.address).toBe(created.address);

    const archive = store.remove('team-a');
    expect(existsSync(join(archive, 'team-a.key'))).toBe(true);
    expect(readFileSync(join(archive, 'team-a.json'), 'utf8')).toContain(created.address);
    expect(store.list().map((i) => i.name)).toEqual(['default']);
    expect(() => store.load('team-a')).toThrow(/Identity "team-a" was removed/);
    expect(() => store.load('team-b')).toThrow(/no identity named "team-b"/);
  });

  it('stores only the reference for env: keys and loads from the variable', () => {
    const env = { WALLET_B: KEY_A };
    const store = new IdentityStore(dataDir, env);
    const record = store.create('ops', { keyFrom: 'env:WALLET_B' });
    expect(record.address.toLowerCase()).toBe(ADDRESS_A);
    expect(record.reference).toBe('env:WALLET_B');
    const files = snapshot(dataDir);
    for (const content of Object.values(files)) expect(content).not.toContain(KEY_A.slice(2));
    expect(store.load('ops').record.peerId).toBe(parsePeerId(ADDRESS_A));
  });

  it('refuses to load when the variable is gone, and never falls back to another wallet', () => {
    const env: NodeJS.ProcessEnv = { WALLET_B: KEY_A };
    const store = new IdentityStore(dataDir, env);
    store.create('ops', { keyFrom: 'env:WALLET_B' });
    delete env.WALLET_B;
    expect(() => store.load('ops')).toThrow(/WALLET_B is not set; the identity is not loaded/);
    const listed = store.list().find((i) => i.name === 'ops')!;
    expect(listed.loadable).toBe(false);
    expect(listed.problem).toMatch(/WALLET_B/);
  });

  it('refuses a referenced key that changed to another wallet', () => {
    const env: NodeJS.ProcessEnv = { WALLET_B: KEY_A };
    const store = new IdentityStore(dataDir, env);
    store.create('ops', { keyFrom: 'env:WALLET_B' });
    env.WALLET_B = `0x${'11'.repeat(32)}`;
    expect(() => store.load('ops')).toThrow(/refusing to use a different wallet/);
  });

  it('loads file: references and fails clearly when the file disappears', () => {
    const keyFile = join(dataDir, 'outside.key');
    writeFileSync(keyFile, `${KEY_A.slice(2)}\n`);
    const store = new IdentityStore(dataDir);
    store.create('filed', { keyFrom: `file:${keyFile}` });
    expect(store.load('filed').record.address.toLowerCase()).toBe(ADDRESS_A);
    rmSync(keyFile);
    expect(() => store.load('filed')).toThrow(/outside\.key does not exist/);
  });

  it.each([
    ['a/b', /not a valid identity name/],
    ['..', /not a valid identity name/],
    ['../escape', /not a valid identity name/],
    ['', /not a valid identity name/],
    ['default', /always exists/],
  ])('rejects the name %j and writes nothing', (name, message) => {
    const store = new IdentityStore(dataDir);
    store.loadDefault();
    const before = snapshot(dataDir);
    expect(() => store.create(name)).toThrow(message);
    expect(snapshot(dataDir)).toEqual(before);
  });

  it.each([
    ['file:/nonexistent/key', /does not exist/],
    ['env:NOT_SET_ANYWHERE', /is not set/],
    ['env:bad-name', /expected env:<VARIABLE_NAME>/],
    ['s3://bucket/key', /env:<VARIABLE_NAME> or file:<path>/],
  ])('rejects the reference %j and writes nothing', (keyFrom, message) => {
    const store = new IdentityStore(dataDir, {});
    store.loadDefault();
    const before = snapshot(dataDir);
    expect(() => store.create('x', { keyFrom })).toThrow(message);
    expect(snapshot(dataDir)).toEqual(before);
  });

  it('rejects malformed hex keys and unreadable files with one clear line', () => {
    const store = new IdentityStore(dataDir, { SHORT: '0x1234', ZERO: `0x${'00'.repeat(32)}` });
    expect(() => store.create('x', { keyFrom: 'env:SHORT' })).toThrow(/expected 64 hex characters/);
    expect(() => store.create('x', { keyFrom: 'env:ZERO' })).toThrow(
      /not a valid secp256k1 private key/,
    );
    if (process.getuid?.() !== 0) {
      const locked = join(dataDir, 'locked.key');
      writeFileSync(locked, KEY_A);
      chmodSync(locked, 0);
      expect(() => store.create('x', { keyFrom: `file:${locked}` })).toThrow(/is not readable/);
    }
    expect(existsSync(join(dataDir, 'identities', 'x.json'))).toBe(false);
  });

  it('refuses a duplicate name', () => {
    const store = new IdentityStore(dataDir);
    store.create('twice');
    expect(() => store.create('twice')).toThrow(/already exists/);
  });
});

describe('peer ids', () => {
  it('accepts any case, with or without 0x, and normalises to 40 lower-case hex', () => {
    expect(parsePeerId('0x2C7536E3605D9C16A7A3D7B1898E529396A65C23')).toBe(ADDRESS_A.slice(2));
    expect(parsePeerId(ADDRESS_A.slice(2))).toBe(ADDRESS_A.slice(2));
    expect(() => parsePeerId('0x1234')).toThrow(/40 hex characters/);
  });
});
