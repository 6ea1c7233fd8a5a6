/**
 * svc as an installed package, and the README's quickstart as typed (README "Install as a
 * package", "A ten-minute tour" step 1; docs/decisions/187-installable-package.md).
 *
 * `npm pack` builds `dist/` (the `prepack` script) and writes the tarball; the tarball is
 * installed into an empty directory with no network: the dependency versions come from this
 * checkout's package-lock.json and their tarballs from the npm cache `npm ci` filled. The README's
 * commands then run as typed, in a shell, with the installed `svc` first on PATH and the
 * project's Node 24 behind it; only environment variables the CLI honours move them to a fresh
 * data directory (SVC_DATA_DIR) and free ports (SVC_*_PORT, `svc up --help`).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, isPortFree } from '../src/devnet/index.js';
import { removeTempDir, tempDir } from '../src/testing/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
};
const run = promisify(execFile);
const MINUTES = 60_000;

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `command` with `args`; a non-zero exit is returned, not thrown. */
async function exec(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<Ran> {
  try {
    const { stdout, stderr } = await run(command, args, {
      ...options,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number | string; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** The shell lines of the first ```sh block after `heading` in the README, comments dropped. */
function readmeCommands(heading: string): string[] {
  const at = README.indexOf(heading);
  if (at < 0) throw new Error(`README has no "${heading}"`);
  const block = /```sh\n([\s\S]*?)```/.exec(README.slice(at));
  if (!block?.[1]) throw new Error(`README has no sh block after "${heading}"`);
  return block[1]
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line.length > 0);
}

/**
 * A README line with an optional part (`svc status [--json]`) is two commands: without the part
 * and with it.
 */
function expand(line: string): string[] {
  const optional = /\s*\[([^\]]+)\]/.exec(line);
  if (!optional) return [line];
  return [line.replace(optional[0], ''), line.replace(optional[0], ` ${optional[1]}`)];
}

/**
 * The lock of an app whose one dependency is the tarball: svc's own entry, and every package
 * this checkout's lock installs for production, at the same place, version and integrity.
 */
function appLock(tarball: string): { manifest: object; lock: object } {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, Record<string, unknown>>;
  };
  const root = lock.packages['']!;
  const app = {
    name: 'svc-install-check',
    private: true,
    dependencies: { svc: `file:${tarball}` },
  };
  const packages: Record<string, unknown> = {
    '': app,
    'node_modules/svc': {
      version: root.version,
      resolved: `file:${tarball}`,
      license: root.license,
      dependencies: root.dependencies,
      bin: root.bin,
      engines: root.engines,
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path.startsWith('node_modules/') && entry.dev !== true) packages[path] = entry;
  }
  return {
    manifest: app,
    lock: { name: app.name, lockfileVersion: 3, requires: true, packages },
  };
}

const work = tempDir('svc-package-');
const app = join(work, 'app');
const dataDir = join(work, 'data');
let tarball = '';
let env: NodeJS.ProcessEnv = {};
let ports: Record<string, number> = {};

/** A README line run as typed, in bash, with the installed svc first on PATH. */
function shell(line: string): Promise<Ran> {
  return exec('bash', ['-c', line], { cwd: app, env });
}

beforeAll(async () => {
  // One build: `npm pack` runs `prepack` (npm run build), with the project's Node 24 on PATH.
  const nodeBin = dirname(process.execPath);
  const base = { ...process.env, PATH: `${nodeBin}:${process.env.PATH ?? ''}` };
  const packed = await exec('npm', ['pack', '--pack-destination', work], { cwd: ROOT, env: base });
  expect(packed.code, packed.stderr).toBe(0);
  tarball = readdirSync(work).find((name) => name.endsWith('.tgz')) ?? '';
  expect(tarball).toBe(`svc-${manifest.version}.tgz`);

  const { manifest: appManifest, lock } = appLock(join(work, tarball));
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify(appManifest, null, 2));
  writeFileSync(join(app, 'package-lock.json'), JSON.stringify(lock, null, 2));
  // Install scripts are not run: svc needs none (anvil comes as its platform package's binary).
  const installed = await exec(
    'npm',
    ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'],
    { cwd: app, env: base },
  );
  expect(installed.code, installed.stderr).toBe(0);

  ports = {
    SVC_BUYER_PORT: await freePort(),
    SVC_GATEWAY_PORT: await freePort(),
    SVC_CHAIN_PORT: await freePort(),
    SVC_BOOTSTRAP_PORT: await freePort(),
    SVC_FACILITATOR_PORT: await freePort(),
    SVC_INDEXER_PORT: await freePort(),
  };
  env = {
    ...base,
    PATH: `${join(app, 'node_modules', '.bin')}:${base.PATH}`,
    SVC_DATA_DIR: dataDir,
    ...Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, String(port)])),
  };
  // As a user's shell: not inside an npm script (svc up would print `npm run svc --` lines).
  for (const name of Object.keys(env)) if (name.startsWith('npm_')) delete env[name];
}, 10 * MINUTES);

afterAll(async () => {
  // Stops whatever a failed assertion left running; a no-op once `svc down` ran.
  if (env.SVC_DATA_DIR) await shell('svc down');
  removeTempDir(work);
}, 2 * MINUTES);

describe('the installed package', () => {
  it('holds the compiled CLI, the console assets and no TypeScript sources', async () => {
    const listed = await exec('tar', ['tzf', join(work, tarball)], { cwd: work, env });
    const files = listed.stdout.split('\n');
    expect(files).toContain('package/bin/svc.js');
    expect(files).toContain('package/dist/cli/index.js');
    expect(files).toContain('package/dist/gateway/console/assets/index.html');
    expect(files.some((file) => file.startsWith('package/src/'))).toBe(false);
    expect(files.some((file) => file.endsWith('.test.js'))).toBe(false);
  });

  it('`svc --version` prints the package version with the project Node', async () => {
    const version = await shell('svc --version');
    expect(version).toEqual({ code: 0, stdout: `${manifest.version}\n`, stderr: '' });
    const node = await shell('node --version');
    expect(node.stdout.trim()).toBe(`v${process.versions.node}`);
  });
});

describe("the README's quickstart, as typed, from a fresh data directory", () => {
  it('runs `npm run svc -- --help` in the checkout', async () => {
    const [help] = readmeCommands('In a checkout, run any command through npm');
    expect(help).toBe('npm run svc -- --help');
    const ran = await exec('bash', ['-c', help!], {
      cwd: ROOT,
      env: { ...env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` },
    });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain('Usage: svc [options] [command]');
  });

  it(
    "runs the package block (after the install) and the tour's local network block",
    async () => {
      const packageBlock = readmeCommands('## Install as a package');
      expect(packageBlock.slice(0, 2)).toEqual(['npm pack', `npm install -g ./${tarball}`]);
      // `npm pack` and the install are what beforeAll did, into a temporary directory.
      const tour = readmeCommands('**1. The local network.**');
      const lines = [...packageBlock.slice(2), ...tour].flatMap(expand);
      expect(lines).toEqual([
        'svc --version',
        'svc up --detach',
        'svc status',
        'svc status --json',
        'svc down',
      ]);
      for (const line of lines) {
        const ran = await shell(line);
        expect(ran.code, `${line}\n${ran.stdout}\n${ran.stderr}`).toBe(0);
        if (line === 'svc up --detach') {
          expect(ran.stdout).toContain('svc local network ready');
          expect(ran.stdout).toContain(`gateway   http://127.0.0.1:${ports.SVC_GATEWAY_PORT}`);
          expect(ran.stdout).toContain(`buyer     http://127.0.0.1:${ports.SVC_BUYER_PORT}`);
          expect(ran.stdout).toContain(`Stop with \`svc down\``);
        }
        if (line === 'svc status') {
          expect(ran.stdout).toMatch(/gateway\s+\d+\s+running/);
          expect(ran.stdout).toContain(`buyer healthy at http://127.0.0.1:${ports.SVC_BUYER_PORT}`);
        }
        if (line === 'svc status --json') {
          const status = JSON.parse(ran.stdout) as unknown;
          expect(JSON.stringify(status)).toContain(`127.0.0.1:${ports.SVC_GATEWAY_PORT}`);
        }
        if (line === 'svc down') {
          expect(ran.stdout).toContain('local network stopped');
          for (const port of Object.values(ports)) expect(await isPortFree(port)).toBe(true);
          expect((await shell('svc status')).stdout).toContain('no local network is running');
        }
      }
    },
    10 * MINUTES,
  );
});
