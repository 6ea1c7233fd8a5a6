import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAlive } from './ChildProcess.js';
import { freePort, isPortFree } from './ports.js';
import { type ComponentSpec, Supervisor } from './Supervisor.js';
import { httpReady } from './waitFor.js';

let logDir: string;
let lines: string[];
beforeEach(() => {
  logDir = mkdtempSync(join(tmpdir(), 'svc-devnet-'));
  lines = [];
});
afterEach(() => rmSync(logDir, { recursive: true, force: true }));

function httpComponent(name: string, port: number, delayMs = 0): ComponentSpec {
  const script = `setTimeout(() => require('http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1', () => console.log('listening')), ${delayMs}); process.on('SIGTERM', () => process.exit(0));`;
  return {
    name,
    label: name,
    command: process.execPath,
    args: ['-e', script],
    ports: [port],
    ready: () => httpReady(`http://127.0.0.1:${port}/`).catch(() => false),
    readyTimeoutMs: 10_000,
  };
}

describe('Supervisor', () => {
  it('starts components in order after each is healthy, and stops them in reverse', async () => {
    const [a, b] = [await freePort(), await freePort()];
    const supervisor = new Supervisor({ logDir, print: (line) => lines.push(line) });
    await supervisor.startAll([httpComponent('first', a, 200), httpComponent('second', b)]);
    expect(
      lines.filter((line) => line.includes('ready')).map((line) => line.trim().split(/\s+/)[1]),
    ).toEqual(['first', 'second']);
    const pids = supervisor.running.map((component) => component.process.pid!);
    await supervisor.stopAll();
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    expect(await isPortFree(a)).toBe(true);
    expect(await isPortFree(b)).toBe(true);
  });

  it('names the port and the process holding it, and starts nothing', async () => {
    const blocker: Server = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    try {
      const supervisor = new Supervisor({ logDir, print: (line) => lines.push(line) });
      await expect(supervisor.startAll([httpComponent('buyer', port)])).rejects.toThrow(
        new RegExp(`buyer: port ${port} is already in use by .*\\(pid ${process.pid}\\)`),
      );
      expect(supervisor.running).toHaveLength(0);
    } finally {
      blocker.close();
    }
  });

  it('stops the others and shows the log tail when a component dies before ready', async () => {
    const port = await freePort();
    const supervisor = new Supervisor({ logDir, print: (line) => lines.push(line) });
    const broken: ComponentSpec = {
      name: 'broken',
      label: 'broken',
      command: process.execPath,
      args: ['-e', 'console.error("cannot open wallet: boom"); process.exit(3)'],
      ready: async () => false,
    };
    const first = httpComponent('first', port);
    await expect(supervisor.startAll([first, broken])).rejects.toThrow(
      /broken exited \(3\)[\s\S]*cannot open wallet: boom/,
    );
    expect(supervisor.running).toHaveLength(0);
    expect(await isPortFree(port)).toBe(true);
  });
});
