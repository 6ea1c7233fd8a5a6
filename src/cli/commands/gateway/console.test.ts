import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoginLink, createStore } from '../../../gateway/index.js';
import { hashSecret } from '../../../gateway/keys/secrets.js';
import { runCli } from '../../testing/runCli.js';

let dataDir: string;
const svc = (...args: string[]) => runCli(['--data-dir', dataDir, 'gateway', 'console', ...args]);

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-console-cli-'));
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('svc gateway console login', () => {
  it('prints a one-time link for the operator, or for a member that exists', async () => {
    const run = await runCli(['--data-dir', dataDir, '--json', 'gateway', 'console', 'login']);
    expect(run.code).toBe(0);
    const { url, subject } = JSON.parse(run.stdout);
    expect(subject).toBe('operator');
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:8379\/console\/login\?token=[A-Za-z0-9_-]{43}$/);
    const token = new URL(url).searchParams.get('token')!;
    const store = await createStore({ dataDir });
    try {
      // The link is stored as a hash and works once.
      expect(await store.consoleTables().consumeLoginLink(hashSecret(token), Date.now())).toBe('');
      expect(
        await store.consoleTables().consumeLoginLink(hashSecret(token), Date.now()),
      ).toBeNull();
      await expect(createLoginLink(store, 'nobody', Date.now())).rejects.toThrow(/no member/);
    } finally {
      await store.close();
    }
    const missing = await svc('login', 'nobody');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/no member named "nobody"/);
    const text = await svc('login', '--url', 'https://gw.example.com/');
    expect(text.stdout).toMatch(/https:\/\/gw\.example\.com\/console\/login\?token=/);
  });
});
