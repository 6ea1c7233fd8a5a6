import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTempDir, tempDir } from '../../../testing/index.js';
import { runCli } from '../../testing/runCli.js';

let dataDir: string;
let child: ChildProcess | undefined;
beforeEach(() => {
  dataDir = tempDir('svc-cli-start-');
});
afterEach(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  child = undefined;
  removeTempDir(dataDir);
});

const BIN = new URL('../../../../bin/svc.js', import.meta.url).pathname;

describe('svc buyer start', () => {
  it('starts with no config file on 127.0.0.1, serves the proxy, and stops on SIGTERM', async () => {
    child = spawn(
      process.execPath,
      [
        BIN,
        '--data-dir',
        dataDir,
        '--json',
        '--log-level',
        'silent',
        'buyer',
        'start',
        '--port',
        '0',
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, SVC_DATA_DIR: dataDir },
      },
    );
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) =>
      child!.on('exit', (code) => resolve(code)),
    );
    const deadline = Date.now() + 60_000;
    while (!stdout.includes('}') && Date.now() < deadline && child.exitCode === null) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const info = JSON.parse(stdout) as {
      url: string;
      peerId: string;
      dataDir: string;
      payments: { enabled: boolean; reason: string | null };
    };
    // No chain deployment in this data dir: the buyer serves free sellers only and says why.
    expect(info.payments.enabled).toBe(false);
    expect(info.payments.reason).toContain('svc chain start');
    expect(await (await fetch(`${info.url}/_svc/channels`)).json()).toEqual({ channels: [] });
    expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(info.peerId).toMatch(/^[0-9a-f]{40}$/);
    const status = (await (await fetch(`${info.url}/_svc/status`)).json()) as Record<
      string,
      unknown
    >;
    expect(status).toMatchObject({ peerCount: 0, dataDir, reachability: 'offline' });
    const models = (await (await fetch(`${info.url}/v1/models`)).json()) as {
      object: string;
      data: unknown[];
    };
    expect(models).toEqual({ object: 'list', data: [] });
    expect(await (await fetch(`${info.url}/_svc/channels`)).json()).toEqual({ channels: [] });
    const chat = await fetch(`${info.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(502);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 90_000);

  it('refuses a non-loopback host in the config', async () => {
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ buyer: { host: '0.0.0.0' } }));
    const run = await runCli(['--data-dir', dataDir, 'buyer', 'start']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('buyer.host');
  });

  it('refuses a bad port with one line', async () => {
    const run = await runCli(['--data-dir', dataDir, 'buyer', 'start', '--port', 'eighty']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--port');
  });
});
