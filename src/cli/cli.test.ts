import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTempDir, tempDir } from '../testing/index.js';
import { runCli } from './testing/runCli.js';

let dataDir: string;
beforeEach(() => {
  dataDir = tempDir('svc-cli-');
});
afterEach(() => removeTempDir(dataDir));

const svc = (...args: string[]) => runCli(['--data-dir', dataDir, ...args]);

describe('svc command line', () => {
  it('prints help listing the commands, and the version', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('buyer');
    expect(help.stdout).toContain('config');
    const version = await runCli(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it.each([
    [['bogus']],
    [['--no-such-option']],
    [['config', 'get']],
    [['config', 'show', '--frobnicate']],
    [['--log-level', 'loud', 'config', 'show']],
  ])('exits 2 with a clear message for %j', async (argv) => {
    const run = await runCli(argv);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/error: /);
  });

  it.each([
    [['buyer', 'start', '--port', '70000']],
    [['chain', 'start', '--port', 'x']],
    [['chain', 'start', '--grace', '-1']],
    [['gateway', 'start', '--port', '1.5']],
    [['up', '--sellers', '21']],
    [['up', '--buyer-port', '0']],
    [['network', 'browse', '--top', '0']],
    [['seller', 'setup', '--provider', 'openai-chat', '--service', 'x', '--input-price', 'ten']],
    [['gateway', 'logs', '--since', 'yesterday-ish']],
  ])('exits 2, the one code for a bad argument, for %j before starting anything', async (argv) => {
    const run = await svc(...argv);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('fails with one line when --data-dir is a file, changing nothing', async () => {
    const file = join(dataDir, 'a-file');
    writeFileSync(file, 'x');
    const run = await runCli(['--data-dir', file, 'buyer', 'identity', 'list']);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(`error: data directory ${file} exists but is not a directory`);
    expect(readFileSync(file, 'utf8')).toBe('x');
  });

  it('the binary runs under the project Node and answers --version', async () => {
    const bin = new URL('../../bin/svc.js', import.meta.url).pathname;
    const { stdout } = await promisify(execFile)(process.execPath, [bin, '--version']);
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('svc config', () => {
  it('shows built-in defaults without a config file', async () => {
    const run = await svc('config', 'show');
    expect(run.code).toBe(0);
    const config = JSON.parse(run.stdout);
    expect(config.buyer.port).toBe(8377);
    expect(config.gateway.port).toBe(8379);
    expect(config.buyer.routingPreferences.minTrustScore).toBe(60);
    expect(config.network.dhtProtocol).toBe('/svc/kad/1.0.0');
    expect(config.chain.network).toBe('local');
  });

  it('sets, gets and unsets values with validation', async () => {
    expect((await svc('config', 'set', 'buyer.port', '9100')).code).toBe(0);
    expect((await svc('config', 'get', 'buyer.port')).stdout.trim()).toBe('9100');
    expect(JSON.parse(readFileSync(join(dataDir, 'config.json'), 'utf8'))).toEqual({
      buyer: { port: 9100 },
    });
    expect((await svc('config', 'set', 'chain.network', 'base')).code).toBe(0);
    expect((await svc('config', 'get', 'chain.network')).stdout.trim()).toBe('base');
    expect((await svc('config', 'unset', 'buyer.port')).code).toBe(0);
    expect((await svc('config', 'get', 'buyer.port')).stdout.trim()).toBe('8377');
  });

  it.each([
    [['buyer.port', '"eighty"'], /buyer\.port: .*number/i],
    [['buyer.port', '70000'], /buyer\.port/],
    [['buyer.nonsense', '1'], /buyer\.nonsense: unknown key nonsense/],
    [['chain.network', 'mainnet'], /chain\.network/],
    [['buyer.routingPreferences.minTrustScore', '-5'], /minTrustScore/],
    [['buyer.routingPreferences.blockedPeerIds', '["nope"]'], /peer id/],
    [['buyer.host', '0.0.0.0'], /buyer\.host/],
  ])('refuses %j with the field and reason, writing nothing', async (args, message) => {
    writeFileSync(join(dataDir, 'config.json'), '{"gateway":{"port":9000}}\n');
    const run = await svc('config', 'set', ...args);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(run.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(readFileSync(join(dataDir, 'config.json'), 'utf8')).toBe('{"gateway":{"port":9000}}\n');
  });

  it('names the file, field and reason when the config file is invalid', async () => {
    const path = join(dataDir, 'config.json');
    writeFileSync(path, JSON.stringify({ gateway: { port: 'x' } }));
    const run = await svc('config', 'show');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${path}: gateway.port:`);
    writeFileSync(path, '{ not json');
    expect((await svc('config', 'show')).stderr).toContain(`${path}: not valid JSON`);
  });

  it('applies defaults < file < env < flags', async () => {
    writeFileSync(
      join(dataDir, 'config.json'),
      JSON.stringify({ buyer: { port: 9001 }, gateway: { port: 9002 } }),
    );
    const fileOnly = JSON.parse((await svc('config', 'show')).stdout);
    expect(fileOnly.buyer.port).toBe(9001);
    const withEnv = await runCli(['--data-dir', dataDir, 'config', 'show'], {
      SVC_BUYER_PORT: '9003',
    });
    expect(JSON.parse(withEnv.stdout).buyer.port).toBe(9003);
    expect(JSON.parse(withEnv.stdout).gateway.port).toBe(9002);
    const badEnv = await runCli(['--data-dir', dataDir, 'config', 'show'], {
      SVC_BUYER_PORT: 'abc',
    });
    expect(badEnv.stderr).toContain('SVC_BUYER_PORT');
  });

  it('honours SVC_DATA_DIR and --config', async () => {
    const alt = join(dataDir, 'alt.json');
    writeFileSync(alt, JSON.stringify({ gateway: { port: 9555 } }));
    const run = await runCli(['--config', alt, 'config', 'get', 'gateway.port'], {
      SVC_DATA_DIR: dataDir,
    });
    expect(run.stdout.trim()).toBe('9555');
    const path = await runCli(['config', 'path'], { SVC_DATA_DIR: dataDir });
    expect(path.stdout).toContain(join(dataDir, 'config.json'));
  });
});

describe('svc buyer identity', () => {
  it('creates, lists (table and JSON), and removes identities', async () => {
    const created = await svc('--json', 'buyer', 'identity', 'create', 'team-a');
    expect(created.code).toBe(0);
    const record = JSON.parse(created.stdout);
    expect(record.peerId).toMatch(/^[0-9a-f]{40}$/);

    const table = await svc('buyer', 'identity', 'list');
    expect(table.stdout).toMatch(/^NAME\s+ADDRESS\s+KEY\s+STATUS/);
    expect(table.stdout).toContain('team-a');

    const listed = JSON.parse((await svc('buyer', 'identity', 'list', '--json')).stdout);
    expect(listed.map((i: { name: string }) => i.name)).toEqual(['default', 'team-a']);

    const balances = await svc('buyer', 'identity', 'list', '--balances');
    expect(balances.stdout).toContain('BALANCES');

    const removed = await svc('buyer', 'identity', 'remove', 'team-a');
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain('archive');
  });

  it('reports bad references in one line with a non-zero exit', async () => {
    const run = await svc('buyer', 'identity', 'create', 'x', '--key-from', 'file:/no/such/file');
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('/no/such/file does not exist');
    const bad = await svc('buyer', 'identity', 'create', '../x');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('not a valid identity name');
  });
});
