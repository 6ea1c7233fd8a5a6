/**
 * The command tree is cheap: help, the version and light commands load no libp2p, no viem and no
 * server (docs/decisions/215-commands-load-their-code-when-they-run.md). Each case runs the real
 * `svc` binary in a child process with a module hook that records every module it loads.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTempDir, tempDir } from '../testing/index.js';

/** Appends the URL of every module the process loads (ESM and CommonJS) to $SVC_MODULE_LOG. */
const RECORDER = `
import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';
const urls = [];
registerHooks({ load(url, context, next) { urls.push(url); return next(url, context); } });
process.on('exit', () => writeFileSync(process.env.SVC_MODULE_LOG, urls.join('\\n')));
`;

/** What only a command that runs a node, signs or serves needs. */
const HEAVY = [
  /\/node_modules\/viem\//,
  /\/node_modules\/(?:libp2p|@libp2p\/[^/]+)\//,
  /\/src\/gateway\/server\//,
  /\/src\/(?:node|network|routing|devnet|buyer|seller|payments|chain)\//,
];
const heavy = (url: string) => HEAVY.some((pattern) => pattern.test(url));

let dir: string;
beforeAll(() => {
  dir = tempDir('svc-lazy-');
});
afterAll(() => removeTempDir(dir));

/** Runs `svc <argv>` (failing on a non-zero exit); its stdout and the URLs of the modules it loaded. */
async function svc(argv: string[]): Promise<{ stdout: string; loaded: string[] }> {
  const bin = new URL('../../bin/svc.js', import.meta.url).pathname;
  const log = join(dir, `modules-${argv.join('_').replace(/[^a-z0-9_-]/gi, '')}.txt`);
  const hook = `data:text/javascript,${encodeURIComponent(RECORDER)}`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', hook, bin, ...argv], {
    env: { ...process.env, SVC_MODULE_LOG: log, SVC_DATA_DIR: join(dir, 'data') },
  });
  return { stdout, loaded: readFileSync(log, 'utf8').split('\n') };
}

describe('what a command loads', () => {
  it.each([
    [['--version'], /^\d+\.\d+\.\d+/],
    [['--help'], /^Usage: svc \[options\] \[command\]/],
    [['help', 'gateway'], /^Usage: svc gateway/],
    [['gateway', '--help'], /^Usage: svc gateway/],
    [['gateway', 'key', '--help'], /^Usage: svc gateway key/],
    [['gateway', 'key', 'create', '--help'], /^Usage: svc gateway key create/],
    [['buyer', 'start', '--help'], /^Usage: svc buyer start/],
    [['up', '--help'], /^Usage: svc up/],
    [['config', 'get', 'buyer.port'], /^8377\n$/],
  ])('svc %j answers without libp2p, viem or a server', async (argv, output) => {
    const run = await svc(argv);
    expect(run.stdout).toMatch(output);
    expect(run.loaded.length).toBeGreaterThan(10);
    // The first few are enough to name the import that pulled them in.
    expect(run.loaded.filter(heavy).slice(0, 5)).toEqual([]);
  });

  it('sees what a command loads when it runs: the recorder and the patterns are not blind', async () => {
    expect(heavy(import.meta.resolve('viem'))).toBe(true);
    expect(heavy(import.meta.resolve('libp2p'))).toBe(true);
    // Listing identities derives each address from its key: viem is needed, and seen.
    const identities = await svc(['buyer', 'identity', 'list']);
    expect(identities.stdout).toMatch(/^NAME\s+ADDRESS[\s\S]*default\s+0x[0-9a-fA-F]{40}/);
    expect(identities.loaded.some((url) => url.includes('/node_modules/viem/'))).toBe(true);
  });

  it('lists keys without the network or viem: the gateway server loads only when a gateway starts', async () => {
    const keys = await svc(['gateway', 'key', 'list']);
    expect(keys.stdout).toMatch(/^ID\s+LABEL/);
    const network = keys.loaded.filter((url) =>
      /\/node_modules\/(?:libp2p|@libp2p\/[^/]+)\/|\/src\/(?:network|routing)\/|startGateway/.test(
        url,
      ),
    );
    expect(network.slice(0, 5)).toEqual([]);
    // Nor viem: the store's x402 rows and the workspaces' default name come from modules that
    // load no chain client.
    expect(keys.loaded.some((url) => url.includes('/src/gateway/store/'))).toBe(true);
    expect(keys.loaded.filter((url) => url.includes('/node_modules/viem/')).slice(0, 5)).toEqual(
      [],
    );
  });

  it('shows the default route and the session pin without the network (the failover rules need no transport)', async () => {
    for (const argv of [
      ['buyer', 'route', 'show'],
      ['buyer', 'connection', 'show'],
    ]) {
      const run = await svc(argv);
      expect(run.stdout).toMatch(/^no (default route set|session pin)/i);
      expect(run.loaded.some((url) => url.includes('/src/routing/'))).toBe(true);
      const network = run.loaded.filter((url) =>
        /\/node_modules\/(?:libp2p|@libp2p\/[^/]+)\/|\/src\/network\//.test(url),
      );
      expect(network.slice(0, 5)).toEqual([]);
    }
  });
});
