import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RouteStateStore } from '../../../routing/index.js';
import { removeTempDir, tempDir } from '../../../testing/index.js';
import { runCli } from '../../testing/runCli.js';

let dataDir: string;
beforeEach(() => {
  dataDir = tempDir('svc-cli-route-');
});
afterEach(() => removeTempDir(dataDir));
const svc = (...args: string[]) => runCli(['--data-dir', dataDir, ...args]);
const PEER = '0xABCDEF0123456789abcdef0123456789ABCDEF01';

describe('svc buyer route / connection', () => {
  it('sets, shows and clears the default route', async () => {
    expect((await svc('buyer', 'route', 'show')).stdout).toContain('no default route set');
    expect((await svc('buyer', 'route', 'set', 'claude-sonnet-4')).code).toBe(0);
    expect(JSON.parse((await svc('--json', 'buyer', 'route', 'show')).stdout)).toEqual({
      defaultRoute: 'claude-sonnet-4',
    });
    await svc('buyer', 'route', 'set', `${PEER}@gpt-4o`);
    expect(new RouteStateStore(dataDir).read().defaultRoute).toBe(
      `${PEER.slice(2).toLowerCase()}@gpt-4o`,
    );
    expect((await svc('buyer', 'route', 'clear')).code).toBe(0);
    expect(new RouteStateStore(dataDir).read().defaultRoute).toBeUndefined();
  });

  it('refuses a bad route with one line', async () => {
    const run = await svc('buyer', 'route', 'set', 'xyz@gpt-4o');
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect((await svc('buyer', 'route', 'set', 'svc')).code).toBe(2);
  });

  it('sets, shows and clears the session pin', async () => {
    expect((await svc('buyer', 'connection', 'set', '--peer', PEER)).code).toBe(0);
    expect((await svc('buyer', 'connection', 'show')).stdout).toContain(
      PEER.slice(2).toLowerCase(),
    );
    expect(new RouteStateStore(dataDir).read().sessionPin).toBe(PEER.slice(2).toLowerCase());
    const bad = await svc('buyer', 'connection', 'set', '--peer', 'nope');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('svc network browse');
    await svc('buyer', 'connection', 'clear');
    expect(JSON.parse((await svc('--json', 'buyer', 'connection', 'show')).stdout)).toEqual({
      sessionPin: null,
    });
  });

  it('has help with examples', async () => {
    const help = await svc('buyer', 'route', '--help');
    expect(help.stdout).toContain('svc buyer route set claude-sonnet-4');
  });
});
