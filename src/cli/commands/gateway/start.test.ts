/**
 * `svc gateway start` runs its buyer in the same process (docs/decisions/180-gateway-runs-its-
 * buyer.md): one command, one data directory; the local proxy is served beside the gateway, the
 * gateway's text routes reach the buyer without HTTP, and the public listener never reaches the
 * buyer's control plane.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { type AddressInfo, createServer } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKey, createStore } from '../../../gateway/index.js';
import { IdentityStore } from '../../../identity/index.js';
import { removeTempDir, tempDir } from '../../../testing/index.js';
import { runCli } from '../../testing/runCli.js';

const BIN = new URL('../../../../bin/svc.js', import.meta.url).pathname;

interface StartInfo {
  url: string;
  buyer: {
    inProcess: boolean;
    url: string;
    localProxy: boolean;
    peerId: string;
    payments: { enabled: boolean };
  };
}

let dataDir: string;
let child: ChildProcess | undefined;
beforeEach(() => {
  dataDir = tempDir('svc-gateway-start-');
});
afterEach(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  child = undefined;
  removeTempDir(dataDir);
});

/** Starts `svc gateway start --json …` and reads the line it prints once listening. */
async function start(args: string[]): Promise<{ info: StartInfo; exited: Promise<number | null> }> {
  const spawned = spawn(
    process.execPath,
    [BIN, '--data-dir', dataDir, '--json', '--log-level', 'silent', 'gateway', 'start', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child = spawned;
  let stdout = '';
  let stderr = '';
  spawned.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  spawned.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => spawned.on('exit', resolve));
  const deadline = Date.now() + 60_000;
  while (!stdout.trimEnd().endsWith('}') && Date.now() < deadline && spawned.exitCode === null) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!stdout.trimEnd().endsWith('}')) throw new Error(`gateway did not start: ${stderr}`);
  return { info: JSON.parse(stdout) as StartInfo, exited };
}

async function keySecret(): Promise<string> {
  const store = await createStore({ dataDir });
  try {
    const created = await createKey(
      store,
      new IdentityStore(dataDir, {}),
      { label: 'k' },
      Date.now(),
    );
    return created.secret;
  } finally {
    await store.close();
  }
}

const CHAT = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });

describe('svc gateway start', () => {
  it('runs the buyer in its process: the local proxy answers, the gateway serves through it, SIGTERM stops both', async () => {
    const { info, exited } = await start(['--port', '0', '--buyer-port', '0']);
    expect(info.buyer).toMatchObject({ inProcess: true, localProxy: true });
    expect(info.buyer.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(info.buyer.peerId).toMatch(/^[0-9a-f]{40}$/);
    // The local proxy of the same process, on loopback, with no key.
    const status = await fetch(`${info.buyer.url}/_svc/status`);
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({ dataDir, peerCount: 0 });

    const secret = await keySecret();
    const auth = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
    const models = await fetch(`${info.url}/v1/models`, { headers: auth });
    expect(models.status).toBe(200);
    expect(await models.json()).toMatchObject({ object: 'list', data: [] });
    // No seller sells anything: the gateway's answer is the buyer's own, in the client's format.
    const viaGateway = await fetch(`${info.url}/v1/chat/completions`, {
      method: 'POST',
      headers: auth,
      body: CHAT,
    });
    const direct = await fetch(`${info.buyer.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: CHAT,
    });
    expect(viaGateway.status).toBe(direct.status);
    const gatewayError = (await viaGateway.json()) as { error: { code: string } };
    const directError = (await direct.json()) as { error: { code: string } };
    expect(gatewayError.error.code).toBe(directError.error.code);
    expect(viaGateway.headers.get('x-svc-request-id')).toMatch(/^req_/);
    // The public listener never reaches the buyer's control plane.
    for (const path of ['/_svc/status', '/_svc/peers', '/_svc/channels', '/metrics']) {
      expect((await fetch(`${info.url}${path}`, { headers: auth })).status).toBe(404);
    }
    child!.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect(fetch(`${info.buyer.url}/_svc/status`)).rejects.toThrow();
  }, 90_000);

  it('--no-local-proxy: the buyer listens on a random loopback port, and the gateway still serves', async () => {
    const { info, exited } = await start(['--port', '0', '--no-local-proxy']);
    expect(info.buyer).toMatchObject({ inProcess: true, localProxy: false });
    expect(info.buyer.url).not.toMatch(/:8377$/);
    const secret = await keySecret();
    const models = await fetch(`${info.url}/v1/models`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    expect(models.status).toBe(200);
    child!.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 90_000);

  it('says which port is taken and what to do when a buyer already holds it', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as AddressInfo;
    try {
      const run = await runCli([
        '--data-dir',
        dataDir,
        '--log-level',
        'silent',
        'gateway',
        'start',
        '--port',
        '0',
        '--buyer-port',
        String(port),
      ]);
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain(`127.0.0.1:${port} is in use`);
      expect(run.stderr).toContain(`--buyer-url http://127.0.0.1:${port}`);
      expect(run.stderr).not.toContain('    at ');
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  }, 90_000);

  it('refuses buyer flags together with --buyer-url, in one line', async () => {
    const run = await runCli([
      '--data-dir',
      dataDir,
      'gateway',
      'start',
      '--buyer-url',
      'http://127.0.0.1:1',
      '--buyer-port',
      '9000',
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--buyer-url');
  });
});
