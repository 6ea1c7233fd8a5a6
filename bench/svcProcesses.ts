/**
 * svc's own processes as the benches start them: `svc seller start` and `svc buyer start`, each
 * its own process, compiled as installed unless `BENCH_SVC_SOURCES=1` (bench/installed.ts), with
 * the node flags a bench run asks for.
 *
 * `BENCH_CPU_PROF_DIR=<dir>` runs them under `node --cpu-prof`; `BENCH_NODE_ARGS_SELLER`
 * (`_BUYER`, `_GATEWAY`) adds node flags to that process, space-separated (e.g. `--import
 * <preload>` to count garbage collections, or a V8 flag to try).
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createKey, createStore } from '../src/gateway/index.js';
import { startGatewayProcess } from '../src/gateway/testing/index.js';
import { IdentityStore } from '../src/identity/index.js';
import { svcCli } from './installed.js';
import { startChild } from './lib.js';

/** The seller both setups run: one free chat-completions service relayed to the fake upstream. */
export function benchSeller(upstreamUrl: string) {
  return {
    displayName: 'bench seller',
    uploadLimitBytes: 1024 * 1024,
    providers: [
      {
        type: 'openai-chat' as const,
        baseUrl: `${upstreamUrl}/v1`,
        services: { 'gpt-4o': { categories: [] } },
        defaultPricing: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 },
        maxConcurrency: 64,
      },
    ],
  };
}

export function nodeArgs(name: string): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  const extra = process.env[`BENCH_NODE_ARGS_${name.toUpperCase()}`]?.split(' ').filter(Boolean);
  return [
    ...(dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name}.cpuprofile`] : []),
    ...(extra ?? []),
  ];
}

/** The CLI's `--json` answer: a pretty-printed object (log lines are single-line JSON). */
function jsonOutput<T>(output: string): T | undefined {
  const match = /^\{\n[\s\S]*?^\}$/m.exec(output);
  if (!match) return undefined;
  try {
    return JSON.parse(match[0]) as T;
  } catch {
    return undefined;
  }
}

/**
 * `svc seller start` then `svc buyer start`, each its own process, under `root`: compiled, as
 * installed, unless `BENCH_SVC_SOURCES=1` (bench/installed.ts).
 */
export async function startSellerAndBuyer(
  root: string,
  upstreamUrl: string,
  stops: Array<() => Promise<void>>,
  buyerConfig: Record<string, unknown> = {},
): Promise<{ sellerPid: number; buyerPid: number; buyerUrl: string; buyerDir: string }> {
  const network = {
    listen: ['/ip4/127.0.0.1/tcp/0'],
    dhtProtocol: '/svc/kad/1.0.0',
  };
  const cli = svcCli(root);
  const sellerDir = join(root, 'seller');
  const buyerDir = join(root, 'buyer');
  mkdirSync(sellerDir, { recursive: true });
  mkdirSync(buyerDir, { recursive: true });
  writeFileSync(
    join(sellerDir, 'config.json'),
    JSON.stringify({
      network,
      seller: benchSeller(upstreamUrl),
    }),
  );
  const seller = await startChild(
    [...nodeArgs('seller'), ...cli, '--data-dir', sellerDir, '--json', 'seller', 'start'],
    (output) => jsonOutput<{ multiaddrs: string[] }>(output),
  );
  stops.unshift(() => seller.stop());
  writeFileSync(
    join(buyerDir, 'config.json'),
    JSON.stringify({
      ...buyerConfig,
      network: { ...network, bootstrap: [seller.ready.multiaddrs[0]] },
      buyer: { routingPreferences: { minTrustScore: 0 } },
    }),
  );
  const buyer = await startChild(
    [
      ...nodeArgs('buyer'),
      ...cli,
      '--data-dir',
      buyerDir,
      '--json',
      'buyer',
      'start',
      '--port',
      '0',
    ],
    (output) => jsonOutput<{ url: string }>(output),
  );
  stops.unshift(() => buyer.stop());
  return { sellerPid: seller.pid, buyerPid: buyer.pid, buyerUrl: buyer.ready.url, buyerDir };
}

/** A gateway key with limits (far above what a run spends), as a real deployment has. */
async function benchKey(dataDir: string): Promise<string> {
  const store = await createStore({ dataDir });
  try {
    const key = await createKey(
      store,
      new IdentityStore(dataDir, {}),
      { label: 'bench', limits: { total: 1_000_000_000_000n } },
      Date.now(),
    );
    return key.secret;
  } finally {
    await store.close();
  }
}

/**
 * `svc gateway start --buyer-url`: the gateway in front of the buyer already running, sharing its
 * data directory as `svc up` deploys it (the buyer's control secret), with a key with limits.
 */
export async function startRemoteGateway(
  root: string,
  buyer: { buyerDir: string; buyerUrl: string },
  stops: Array<() => Promise<void>>,
) {
  const secret = await benchKey(buyer.buyerDir);
  const gateway = await startGatewayProcess({
    dataDir: buyer.buyerDir,
    buyerUrl: buyer.buyerUrl,
    nodeArgs: nodeArgs('gateway'),
    cli: svcCli(root),
  });
  stops.unshift(() => gateway.stop());
  return { url: gateway.url, pid: gateway.pid, secret };
}

/**
 * `svc gateway start` with its own buyer, in a data directory of its own configured as the
 * buyer's (same seller to bootstrap from), and a key with limits as the other gateway's.
 */
export async function startEmbedded(
  root: string,
  buyerDir: string,
  stops: Array<() => Promise<void>>,
) {
  const dataDir = join(root, 'embedded');
  mkdirSync(dataDir, { recursive: true });
  copyFileSync(join(buyerDir, 'config.json'), join(dataDir, 'config.json'));
  const secret = await benchKey(dataDir);
  const gateway = await startGatewayProcess({
    dataDir,
    nodeArgs: nodeArgs('embedded'),
    cli: svcCli(root),
  });
  stops.unshift(() => gateway.stop());
  return { url: gateway.url, pid: gateway.pid, secret };
}
