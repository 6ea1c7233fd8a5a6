/**
 * Memory of the real buyer process (issue goal: "RSS with 1,000 cached peers ≤ 200 MB").
 *
 * Spawns `svc buyer start` the way a user runs it — `bin/svc.js` from the checkout (TypeScript
 * through tsx) and the compiled package (`bin/svc.js` picking `dist/`, as when installed) — with
 * a data dir whose `network/peers.json` holds 1,000 signed peer records of 20 services each (real
 * random identities, real signatures: the buyer re-verifies every record on load). Waits until the
 * buyer serves and `/_svc/status` counts every peer, sends a few requests, then reads VmRSS and
 * VmHWM from /proc/<pid>/status. Baselines in the same run: the same buyer with no peers and a
 * bare `node -e` HTTP server; and `svc gateway start` compiled with the same 1,000 peers, its buyer
 * in its process (goal ≤ 250 MB). The cached peers' addresses point at a local listener that accepts
 * connections and never answers, so they stay "reachable" (listed by /v1/models) while the
 * background refresh waits on them — as when sellers are slow — and no traffic leaves 127.0.0.1.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { peerRecord } from '../src/catalog/testing/peerRecord.js';
import { peerIdFromAddress } from '../src/identity/index.js';
import { libp2pPeerIdFromIdentity, signMetadata } from '../src/network/index.js';
import { installedEntry } from './installed.js';
import { printComparison, printFigure } from './lib.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PEERS = 1000;
const SERVICES_PER_PEER = 20;
const MODELS = Array.from({ length: 500 }, (_, i) => `model-${i}`);
const ROUNDS = Number(process.env.BENCH_RSS_ROUNDS ?? 3);
const MIB = 2 ** 20;
const GOAL_MIB = 200e6 / MIB;
/** A gateway with its buyer in its process (docs/decisions/180-gateway-runs-its-buyer.md). */
const GATEWAY_GOAL_MIB = 250e6 / MIB;

interface Memory {
  rssMiB: number;
  hwmMiB: number;
}

interface BuyerRun {
  /** After start-up and the peer cache is loaded, before requests. */
  ready: Memory;
  /** After a few requests (models, peers, status, count_tokens, an unknown model). */
  afterRequests: Memory;
  models: number;
  peers: number;
  startMs: number;
}

function readMemory(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string) =>
    Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rssMiB: kib('VmRSS') / 1024, hwmMiB: kib('VmHWM') / 1024 };
}

/** Accepts TCP connections and never answers (held open until closed). */
export async function blackHole(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `peers.json` with `count` signed records (version 1 of the cache file). */
export async function peerCacheFile(count: number, port: number): Promise<string> {
  const now = Date.now();
  const peers = [];
  for (let p = 0; p < count; p++) {
    const privateKey = generatePrivateKey();
    const account = privateKeyToAccount(privateKey);
    const peerId = peerIdFromAddress(account.address);
    const template = peerRecord({
      peerId,
      services: Array.from({ length: SERVICES_PER_PEER }, (_, s) => ({
        id: MODELS[(p * 7 + s) % MODELS.length]!,
        pricing: {
          inputUsdPerMillion: 1 + ((p * 13 + s) % 50) / 10,
          outputUsdPerMillion: 2 + (p % 7),
        },
      })),
    });
    const { signature: _unsigned, ...unsigned } = template.metadata;
    const metadata = await signMetadata({ ...unsigned, timestamp: now }, account);
    peers.push({
      metadata,
      reachable: true,
      lastSeenAt: now,
      addresses: [`/ip4/127.0.0.1/tcp/${port}`],
      libp2pPeerId: libp2pPeerIdFromIdentity(privateKey).toString(),
    });
  }
  return `${JSON.stringify({ version: 1, peers }, null, 2)}\n`;
}

/** A fresh data dir: loopback-only network config and (optionally) the peer cache. */
export function dataDir(root: string, name: string, peersJson: string | undefined): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'network'), { recursive: true });
  writeFileSync(
    join(dir, 'config.json'),
    `${JSON.stringify({ network: { listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [] } }, null, 2)}\n`,
  );
  if (peersJson !== undefined) writeFileSync(join(dir, 'network', 'peers.json'), peersJson);
  return dir;
}

async function waitFor<T>(
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Spawns `node <args>`, waits for the URL it prints, measures, stops it. */
async function withProcess<T>(
  args: string[],
  urlPattern: RegExp,
  body: (pid: number, url: string) => Promise<T>,
): Promise<T> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: childEnv(),
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  try {
    const url = await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${output}`);
        return urlPattern.exec(output)?.[1];
      },
      120_000,
      `${args.join(' ')} to listen`,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${output}`);
    });
    if (child.pid === undefined) throw new Error('no pid');
    return await body(child.pid, url);
  } finally {
    await stopChild(child);
  }
}

/** The bench's environment without anything that would change how node or svc runs. */
function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (key.startsWith('SVC_') || key.startsWith('NODE_') || key.startsWith('VITEST'))
      delete env[key];
  }
  return env;
}

async function getJson(url: string): Promise<Record<string, unknown>> {
  const response = await fetch(url);
  return (await response.json()) as Record<string, unknown>;
}

/** How the buyer runs: alone (`svc buyer start`) or in the gateway's process (`svc gateway start`). */
type Host = 'buyer' | 'gateway';

const START: Record<Host, { args: string[]; url: RegExp }> = {
  buyer: { args: ['buyer', 'start', '--port', '0'], url: /buyer listening on (http:\/\/\S+)/ },
  gateway: {
    args: ['gateway', 'start', '--port', '0', '--buyer-port', '0'],
    url: /local proxy on (http:\/\/\S+)/,
  },
};

async function runBuyer(
  entry: string,
  dir: string,
  peers: number,
  host: Host = 'buyer',
): Promise<BuyerRun> {
  const started = Date.now();
  return withProcess(
    [entry, '--data-dir', dir, ...START[host].args],
    START[host].url,
    async (pid, url) => {
      const status = await waitFor(
        async () => {
          const body = await getJson(`${url}/_svc/status`);
          return body.peerCount === peers ? body : undefined;
        },
        60_000,
        `${peers} peers loaded`,
      );
      const models = (await getJson(`${url}/v1/models`)).data as { id: string }[];
      const startMs = Date.now() - started;
      await settle();
      const ready = readMemory(pid);
      for (let i = 0; i < 3; i++) await getJson(`${url}/v1/models`);
      await getJson(`${url}/_svc/peers`);
      await getJson(`${url}/_svc/status`);
      const model = models[0]?.id ?? 'model-0';
      await fetch(`${url}/v1/messages/count_tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model,
          messages: [{ role: 'user', content: 'How much memory does the buyer use?' }],
        }),
      }).then((r) => r.arrayBuffer());
      await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'no-such-model',
          messages: [{ role: 'user', content: 'hi' }],
        }),
      }).then((r) => r.arrayBuffer());
      await settle();
      return {
        ready,
        afterRequests: readMemory(pid),
        models: models.length,
        peers: Number(status.peerCount),
        startMs,
      };
    },
  );
}

/** Lets start-up garbage and lazy work settle before reading memory. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 1500));
}

const BARE_SERVER = `require('node:http').createServer((q, s) => s.end('{}')).listen(0, '127.0.0.1', function () { console.log('listening on http://127.0.0.1:' + this.address().port); });`;

async function bareServer(): Promise<Memory> {
  return withProcess(['-e', BARE_SERVER], /listening on (http:\/\/\S+)/, async (pid, url) => {
    await getJson(url);
    await settle();
    return readMemory(pid);
  });
}

function logRun(round: number, key: string, run: BuyerRun): void {
  console.log(
    `round ${round + 1} ${key.padEnd(24)} ready ${run.ready.rssMiB.toFixed(1)} MiB, after requests ${run.afterRequests.rssMiB.toFixed(1)} MiB, peak ${run.afterRequests.hwmMiB.toFixed(1)} MiB, ${run.models} models, ready in ${run.startMs} ms`,
  );
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

export default async function bench(): Promise<Record<string, unknown>> {
  const root = mkdtempSync(join(tmpdir(), 'svc-buyer-rss-'));
  const hole = await blackHole();
  try {
    const generated = Date.now();
    const peersJson = await peerCacheFile(PEERS, hole.port);
    console.log(
      `generated ${PEERS} signed peer records (${(peersJson.length / MIB).toFixed(1)} MiB peers.json) in ${Date.now() - generated} ms`,
    );
    const entries = {
      checkout: join(ROOT, 'bin', 'svc.js'),
      compiled: installedEntry(root),
    };
    const results: Record<string, unknown> = {};
    const rounds: Record<string, BuyerRun[]> = {};
    const bare: Memory[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      bare.push(await bareServer());
      for (const [mode, entry] of Object.entries(entries)) {
        for (const peers of [0, PEERS]) {
          const key = `${mode}, ${peers} peers`;
          const dir = dataDir(root, `${mode}-${peers}-${round}`, peers > 0 ? peersJson : undefined);
          const run = await runBuyer(entry, dir, peers);
          rmSync(dir, { recursive: true, force: true });
          rounds[key] = [...(rounds[key] ?? []), run];
          logRun(round, key, run);
        }
      }
      // The gateway with its buyer, compiled, with the cached peers (the deployed layout).
      const key = `gateway+buyer compiled, ${PEERS} peers`;
      const dir = dataDir(root, `gateway-${round}`, peersJson);
      const run = await runBuyer(entries.compiled, dir, PEERS, 'gateway');
      rmSync(dir, { recursive: true, force: true });
      rounds[key] = [...(rounds[key] ?? []), run];
      logRun(round, key, run);
    }
    const bareRss = median(bare.map((m) => m.rssMiB));
    printFigure('bare node http server RSS (median)', bareRss, 'MiB');
    for (const [key, runs] of Object.entries(rounds)) {
      const ready = median(runs.map((r) => r.ready.rssMiB));
      const after = median(runs.map((r) => r.afterRequests.rssMiB));
      const hwm = median(runs.map((r) => r.afterRequests.hwmMiB));
      const idleRuns = rounds[key.replace(/\d[\d,]* peers$/, '0 peers')];
      printFigure(
        `buyer RSS, ${key}, after requests`,
        after,
        'MiB',
        key.startsWith('gateway')
          ? `≤ ${GATEWAY_GOAL_MIB.toFixed(1)} MiB`
          : key.includes(`${PEERS}`)
            ? `≤ ${GOAL_MIB.toFixed(1)} MiB`
            : undefined,
      );
      printFigure(`buyer peak RSS (VmHWM), ${key}`, hwm, 'MiB');
      printComparison(`buyer vs bare node server, ${key}`, after, bareRss, 'MiB');
      if (key.endsWith(`${PEERS} peers`) && idleRuns) {
        const idle = median(idleRuns.map((r) => r.afterRequests.rssMiB));
        printComparison(`1,000 peers vs 0 peers, ${key.split(',')[0]}`, after, idle, 'MiB');
      }
      results[key] = { readyRssMiB: ready, afterRequestsRssMiB: after, peakRssMiB: hwm, runs };
    }
    return {
      rounds: ROUNDS,
      bareServer: { rssMiB: bareRss, runs: bare },
      buyer: results,
      goalMiB: GOAL_MIB,
      gatewayGoalMiB: GATEWAY_GOAL_MIB,
    };
  } finally {
    await hole.close();
    rmSync(root, { recursive: true, force: true });
  }
}
