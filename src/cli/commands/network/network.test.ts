import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  loopbackNetworkConfig,
  randomIdentity,
  waitFor,
} from '../../../network/testing/loopback.js';
import { type SellerHandle, startSeller } from '../../../seller/index.js';
import { removeTempDir, tempDir } from '../../../testing/index.js';
import { runCli } from '../../testing/runCli.js';

const BIN = new URL('../../../../bin/svc.js', import.meta.url).pathname;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('svc network on a live loopback network', () => {
  let dataDir: string;
  let bootstrapProcess: ChildProcess;
  let bootstrapOutput = '';
  let bootstrapAddress: string;
  const sellers: SellerHandle[] = [];
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    dataDir = tempDir('svc-network-cli-');
    bootstrapProcess = spawn(
      process.execPath,
      [
        BIN,
        '--data-dir',
        join(dataDir, 'bootstrap'),
        'network',
        'bootstrap',
        '--listen',
        '/ip4/127.0.0.1/tcp/0',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    bootstrapProcess.stdout!.on('data', (chunk: Buffer) => {
      bootstrapOutput += chunk.toString();
    });
    bootstrapAddress = await waitFor(
      () => /(\/ip4\/127\.0\.0\.1\/tcp\/\d+\/p2p\/\S+)/.exec(bootstrapOutput)?.[1],
      90_000,
      'bootstrap address',
    );
    const network = loopbackNetworkConfig({ bootstrap: [bootstrapAddress] });
    const offers = [
      { name: 'cheap', price: 0.1, tags: ['chat'] },
      { name: 'pricey', price: 5, tags: ['chat', 'code'] },
    ];
    for (const offer of offers) {
      sellers.push(
        await startSeller({
          identity: randomIdentity(),
          network,
          seller: {
            displayName: offer.name,
            uploadLimitBytes: 1024 * 1024,
            providers: [
              {
                type: 'demo',
                services: { [`demo-${offer.name}`]: { categories: offer.tags } },
                defaultPricing: {
                  inputUsdPerMillion: offer.price,
                  outputUsdPerMillion: offer.price * 2,
                },
                maxConcurrency: 4,
              },
            ],
          },
        }),
      );
    }
    env = { SVC_BOOTSTRAP: bootstrapAddress, SVC_BUYER_PORT: String(await freePort()) };
  }, 180_000);

  afterAll(async () => {
    for (const seller of sellers) await seller.stop();
    if (bootstrapProcess.exitCode === null) bootstrapProcess.kill('SIGKILL');
    removeTempDir(dataDir);
  });

  const svc = (...args: string[]) => runCli(['--data-dir', join(dataDir, 'cli'), ...args], env);

  it('browses the network directly with the documented JSON shape, for every sort key', {
    timeout: 90_000,
  }, async () => {
    for (const sort of ['score', 'volume', 'sessions', 'price', 'recent']) {
      const run = await svc('network', 'browse', '--json', '--sort', sort);
      expect(run.code, run.stderr).toBe(0);
      const result = JSON.parse(run.stdout);
      expect(Object.keys(result).sort()).toEqual(
        ['filters', 'onChainStatsRefreshedAt', 'peers', 'sort', 'source', 'total'].sort(),
      );
      expect(result).toMatchObject({
        source: 'network:direct',
        onChainStatsRefreshedAt: null,
        sort,
        filters: { service: null, tags: null },
        total: 2,
      });
      expect(result.peers[0]).toMatchObject({
        reputation: { score: null, volumeUsd: null, sessions: null },
      });
      expect(typeof result.peers[0].signature).toBe('string');
      if (sort === 'price')
        expect(result.peers.map((p: { displayName: string }) => p.displayName)).toEqual([
          'cheap',
          'pricey',
        ]);
    }
  });

  it('filters by tag and service, and answers total 0 as valid JSON', async () => {
    const tagged = JSON.parse((await svc('network', 'browse', '--json', '--tag', 'code')).stdout);
    expect(tagged.total).toBe(1);
    expect(tagged.filters).toEqual({ service: null, tags: ['code'] });
    expect(tagged.peers[0].displayName).toBe('pricey');
    const none = await svc('network', 'browse', '--json', '--service', 'no-such-model');
    expect(none.code).toBe(0);
    expect(JSON.parse(none.stdout)).toMatchObject({
      total: 0,
      peers: [],
      filters: { service: 'no-such-model' },
    });
  });

  it('prints human tables with prices per million tokens', async () => {
    const peers = await svc('network', 'browse', '--sort', 'price');
    expect(peers.stdout).toContain('CHEAPEST IN/OUT $/M');
    expect(peers.stdout).toContain('$0.10 / $0.20');
    const services = await svc('network', 'browse', '--services');
    expect(services.stdout).toMatch(/demo-pricey\s+\$5\.00\s+\$10\.00/);
  });

  it('rejects an unknown sort key listing the valid ones', async () => {
    const run = await svc('network', 'browse', '--sort', 'popularity');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('score, volume, sessions, price, recent');
  });

  it('shows one peer in full, and fails clearly for an unknown one', async () => {
    const id = sellers[1]!.node.peerId;
    const run = await svc('network', 'peer', `0x${id.toUpperCase()}`, '--json');
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).peer).toMatchObject({ peerId: id, displayName: 'pricey' });
    const human = await svc('network', 'peer', id);
    expect(human.stdout).toContain('demo: no real model behind it');
    const missing = await svc('network', 'peer', '11'.repeat(20), '--wait', '1');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('not found');
  });

  it("uses a running buyer's list when one answers, and sorts by its reputation", async () => {
    const [a, b] = sellers.map((s) => s.metadata());
    const server: Server = createServer((req, res) => {
      if (req.url !== '/_svc/peers') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          peers: [
            {
              metadata: a,
              reachable: true,
              lastSeenAt: 1,
              addresses: [],
              reputation: { score: 40, sessions: 3 },
            },
            {
              metadata: b,
              reachable: true,
              lastSeenAt: 2,
              addresses: [],
              reputation: { score: 90, sessions: 1 },
            },
          ],
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const run = await runCli(
        ['--data-dir', join(dataDir, 'cli'), 'network', 'browse', '--json'],
        {
          ...env,
          SVC_BUYER_PORT: String(port),
        },
      );
      const result = JSON.parse(run.stdout);
      expect(result.source).toBe(`buyer:http://127.0.0.1:${port}/_svc/peers`);
      expect(result.peers.map((p: { displayName: string }) => p.displayName)).toEqual([
        'pricey',
        'cheap',
      ]);
      const bySessions = JSON.parse(
        (
          await runCli(
            [
              '--data-dir',
              join(dataDir, 'cli'),
              'network',
              'browse',
              '--json',
              '--sort',
              'sessions',
            ],
            {
              ...env,
              SVC_BUYER_PORT: String(port),
            },
          )
        ).stdout,
      );
      expect(bySessions.peers[0].reputation.sessions).toBe(3);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('takes records from the network and scores from a buyer whose list has only summaries', async () => {
    const [a, b] = sellers.map((s) => s.node.peerId);
    const server: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          total: 2,
          peers: [
            { peerId: a, displayName: 'cheap', reachable: true, reputationScore: 10, offers: [] },
            { peerId: b, displayName: 'pricey', reachable: true, reputationScore: 75, offers: [] },
          ],
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const run = await runCli(
        ['--data-dir', join(dataDir, 'cli'), 'network', 'browse', '--json'],
        {
          ...env,
          SVC_BUYER_PORT: String(port),
        },
      );
      expect(run.code, run.stderr).toBe(0);
      const result = JSON.parse(run.stdout);
      expect(result.source).toBe(`network:direct+reputation:http://127.0.0.1:${port}/_svc/peers`);
      expect(
        result.peers.map((p: { reputation: { score: number } }) => p.reputation.score),
      ).toEqual([75, 10]);
      expect(typeof result.peers[0].signature).toBe('string');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('runs `svc seller start` from a config written by `svc seller setup`, until Ctrl-C', async () => {
    const sellerDir = join(dataDir, 'seller');
    const setup = await runCli(
      [
        '--data-dir',
        sellerDir,
        'seller',
        'setup',
        '--provider',
        'demo',
        '--replace',
        '--display-name',
        'cli seller',
      ],
      {},
    );
    expect(setup.code, setup.stderr).toBe(0);
    const child = spawn(
      process.execPath,
      [
        BIN,
        '--data-dir',
        sellerDir,
        'seller',
        'start',
        '--port',
        '0',
        '--bootstrap',
        bootstrapAddress,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    try {
      const peerId = await waitFor(
        () => /seller ([0-9a-f]{40}) \(cli seller\) running/.exec(output)?.[1],
        90_000,
        'seller start',
      );
      const found = await svc('network', 'peer', peerId, '--json');
      expect(found.code, found.stderr).toBe(0);
      expect(JSON.parse(found.stdout).peer).toMatchObject({
        displayName: 'cli seller',
        capabilities: { demo: true },
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(output).toContain('seller stopped');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 180_000);

  it('stops the bootstrap node on Ctrl-C', async () => {
    const exited = new Promise<number | null>((resolve) => bootstrapProcess.once('exit', resolve));
    bootstrapProcess.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(bootstrapOutput).toContain('bootstrap node stopped');
  });
});

describe('svc network with nothing reachable', () => {
  it('says no peers are reachable and still prints valid JSON', async () => {
    const dataDir = tempDir('svc-network-down-');
    try {
      const dead = `/ip4/127.0.0.1/tcp/${await freePort()}/p2p/16Uiu2HAmPkWsn53eMYvoBZ5G1JLdSTawyjR9xkK3cUEUmf2ueiEe`;
      const run = await runCli(['--data-dir', dataDir, 'network', 'browse', '--json', '--direct'], {
        SVC_BOOTSTRAP: dead,
      });
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ total: 0, peers: [] });
      expect(run.stderr).toContain('no peers reachable');
    } finally {
      removeTempDir(dataDir);
    }
  });
});
