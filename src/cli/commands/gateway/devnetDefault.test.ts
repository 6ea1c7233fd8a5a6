import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devLayout } from '../../../devnet/index.js';
import { createStore } from '../../../gateway/index.js';
import { runCli } from '../../testing/runCli.js';

let home: string;
const savedHome = process.env.HOME;

beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'svc-home-'));
  // The default data directory is ~/.svc; HOME decides where ~ is.
  process.env.HOME = home;
});
afterAll(() => {
  process.env.HOME = savedHome;
  rmSync(home, { recursive: true, force: true });
});

function writeDevState(upPid: number): void {
  const layout = devLayout(join(home, '.svc'));
  mkdirSync(layout.buyer, { recursive: true });
  writeFileSync(
    layout.state,
    JSON.stringify({
      upPid,
      startedAt: new Date().toISOString(),
      detached: false,
      buyerUrl: 'http://127.0.0.1:1',
      gatewayUrl: 'http://127.0.0.1:2',
      chainRpcUrl: 'http://127.0.0.1:3',
      components: [],
    }),
  );
}

async function labels(dataDir: string): Promise<string[]> {
  const store = await createStore({ dataDir });
  try {
    return (await store.listKeys()).map((key) => key.label);
  } finally {
    await store.close();
  }
}

describe('gateway commands while svc up runs', () => {
  it("act on the local network's gateway when no data directory is chosen", async () => {
    writeDevState(process.pid);
    const run = await runCli(['gateway', 'key', 'create', '--label', 'mine'], { HOME: home });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/using the running local network's gateway/);
    expect(await labels(devLayout(join(home, '.svc')).buyer)).toContain('mine');
    // An explicit choice wins.
    const other = join(home, 'other');
    const chosen = await runCli(['--data-dir', other, 'gateway', 'key', 'create', '--label', 'x'], {
      HOME: home,
    });
    expect(chosen.stderr).toBe('');
    expect(await labels(other)).toEqual(['x']);
  });

  it('leave the default data directory alone when no local network runs', async () => {
    writeDevState(2 ** 22 + 12345);
    const run = await runCli(['gateway', 'key', 'create', '--label', 'plain'], { HOME: home });
    expect(run.code, run.stderr).toBe(0);
    expect(await labels(join(home, '.svc'))).toEqual(['plain']);
  });
});
