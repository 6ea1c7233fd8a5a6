/**
 * The churn test's network, every part real and in its own process where a fault must hit it
 * alone: anvil with our contracts, a bootstrap node and a fake OpenAI upstream in the test
 * process; N paid sellers (one `svc seller start` process each, fixed port and identity, so a
 * kill -9 and a start again is a restart with the same identity); a buyer (`svc buyer start`) and
 * a gateway with its own buyer (`svc gateway start`), both with funded wallets, and a gateway key
 * with a budget. Only the upstream vendor is faked.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DEFAULT_FAUCET_ETH,
  type LocalChain,
  startLocalChain,
  writeDeployment,
} from '../../src/chain/index.js';
import { freePort } from '../../src/devnet/index.js';
import { createKey, createStore } from '../../src/gateway/index.js';
import { IdentityStore } from '../../src/identity/index.js';
import { parseUsd } from '../../src/money/index.js';
import type { SvcNode } from '../../src/network/index.js';
import { loopbackNetworkConfig, startLoopbackNode } from '../../src/network/testing/loopback.js';
import { type BuyerProcess, startBuyerProcess } from '../../src/node/testing/buyerProcess.js';
import { PRICING, USAGE } from '../../src/node/testing/paidFixture.js';
import { type FakeUpstream, startFakeUpstream } from '../../src/seller/testing/index.js';
import { removeTempDir, tempDir, waitFor } from '../../src/testing/index.js';
import { SellerProcess } from './sellerProcess.js';

const BIN = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));
export const CHURN_MODEL = 'churn-paid';
/** Each wallet's deposit: far above what the run spends, so no request fails for want of it. */
const DEPOSIT_MICRO = parseUsd('50');

/** What both buyers run with: unscored sellers admitted, no audits (every paid request is ours). */
function buyerConfig(bootstrap: string) {
  return {
    network: loopbackNetworkConfig({ bootstrap: [bootstrap] }),
    buyer: { routingPreferences: { minTrustScore: 0 }, audit: { enabled: false } },
    chain: { payments: { channelLockUsd: '0.20', sweepIntervalSeconds: 1 } },
  };
}

export interface ChurnSeller {
  process: SellerProcess;
  dataDir: string;
  /** `0x` + the peer id: the seller's wallet, the channels' seller. */
  address: `0x${string}`;
}

/** A `svc` process started with `args`, ready once its output matches `ready`. */
interface SvcProcess {
  pid: number;
  stop(): Promise<void>;
}

async function startSvc(dataDir: string, args: string[], ready: RegExp): Promise<SvcProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    [BIN, '--data-dir', dataDir, '--log-level', 'warn', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_NO_WARNINGS: '1' } },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`did not start: ${output}`)), 240_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`exited: ${output}`));
    });
  });
  return {
    pid: child.pid ?? 0,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        // A process left stopped (SIGSTOP) by a failing test would never see the SIGTERM.
        child.kill('SIGCONT');
        child.kill('SIGTERM');
      }
      await exited;
    },
  };
}

export class ChurnNetwork {
  readonly sellers: ChurnSeller[] = [];
  buyer: BuyerProcess | undefined;
  gateway: SvcProcess | undefined;
  gatewayUrl = '';
  /** The gateway's own buyer's loopback listener (its channels). */
  gatewayBuyerUrl = '';
  gatewayKey = '';
  private readonly dirs: string[] = [];

  private constructor(
    readonly chain: LocalChain,
    readonly bootstrap: SvcNode,
    readonly upstream: FakeUpstream,
  ) {}

  /** Starts everything, or stops what it started and rethrows. */
  static async start(sellers: number): Promise<ChurnNetwork> {
    const chain = await startLocalChain();
    const bootstrap = await startLoopbackNode('bootstrap');
    // Streams of 9 words 40 ms apart: long enough for a kill to land in the middle of one.
    const upstream = await startFakeUpstream({ usage: USAGE, chunkDelayMs: 40 });
    const net = new ChurnNetwork(chain, bootstrap, upstream);
    try {
      // Buyers first, while the box is quiet (20 seller processes starting slow everything down),
      // then the sellers, then both buyers must reach every seller.
      await net.startBuyers();
      await net.startSellers(sellers);
      await net.waitUntilEveryoneSeesEverySeller();
    } catch (error) {
      await net.stop();
      throw error;
    }
    return net;
  }

  private dir(prefix: string): string {
    const dir = tempDir(`svc-churn-${prefix}-`);
    this.dirs.push(dir);
    return dir;
  }

  private async funded(dir: string, usdcMicro?: bigint): Promise<`0x${string}`> {
    writeDeployment(dir, this.chain.deployment);
    const address = new IdentityStore(dir, {}).loadDefault().account.address;
    await this.chain.faucet(address, {
      ethWei: DEFAULT_FAUCET_ETH,
      ...(usdcMicro ? { usdcMicro } : {}),
    });
    return address;
  }

  private async startSellers(count: number): Promise<void> {
    const bootstrap = this.bootstrap.multiaddrs()[0]!.toString();
    for (let i = 0; i < count; i++) {
      const dataDir = this.dir(`seller${i}`);
      const address = await this.funded(dataDir);
      const process = new SellerProcess({
        dataDir,
        port: await freePort(),
        bootstrap: [bootstrap],
        env: { FAKE_OPENAI_KEY: 'sk-fake' },
        seller: {
          displayName: `churn seller ${i}`,
          uploadLimitBytes: 65_536,
          providers: [
            {
              type: 'openai-chat',
              name: 'openai',
              baseUrl: this.upstream.baseUrl,
              apiKeyEnv: 'FAKE_OPENAI_KEY',
              services: { [CHURN_MODEL]: { categories: ['chat'] } },
              defaultPricing: PRICING,
              maxConcurrency: 16,
            },
          ],
        },
      });
      this.sellers.push({ process, dataDir, address: address.toLowerCase() as `0x${string}` });
    }
    // Two at a time: each start is a Node process compiling the sources on a shared 2-core box.
    for (let i = 0; i < this.sellers.length; i += 2) {
      await Promise.all(this.sellers.slice(i, i + 2).map((seller) => seller.process.start()));
    }
  }

  private async startBuyers(): Promise<void> {
    const bootstrap = this.bootstrap.multiaddrs()[0]!.toString();
    const buyerDir = this.dir('buyer');
    const buyerAddress = await this.funded(buyerDir, DEPOSIT_MICRO);
    writeFileSync(join(buyerDir, 'config.json'), JSON.stringify(buyerConfig(bootstrap)));
    this.buyer = await startBuyerProcess(buyerDir);

    const gatewayDir = this.dir('gateway');
    const gatewayAddress = await this.funded(gatewayDir, DEPOSIT_MICRO);
    writeFileSync(join(gatewayDir, 'config.json'), JSON.stringify(buyerConfig(bootstrap)));
    const store = await createStore({ dataDir: gatewayDir });
    try {
      const identities = new IdentityStore(gatewayDir, {});
      const { secret } = await createKey(
        store,
        identities,
        { label: 'churn load', limits: { total: parseUsd('20') } },
        Date.now(),
      );
      this.gatewayKey = secret;
    } finally {
      await store.close();
    }
    const gatewayPort = await freePort();
    const buyerPort = await freePort();
    this.gateway = await startSvc(
      gatewayDir,
      ['gateway', 'start', '--port', String(gatewayPort), '--buyer-port', String(buyerPort)],
      /buyer in this process/,
    );
    this.gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    this.gatewayBuyerUrl = `http://127.0.0.1:${buyerPort}`;
    for (const address of [buyerAddress, gatewayAddress]) {
      await waitFor(
        async () => (await this.chain.contract.creditsOf(address)) === DEPOSIT_MICRO,
        30_000,
        `deposit of ${address} swept`,
      );
    }
  }

  /** Both buyers list every seller as reachable. */
  async waitUntilEveryoneSeesEverySeller(): Promise<void> {
    for (const url of [this.buyer!.url, this.gatewayBuyerUrl]) {
      await waitFor(
        async () => {
          await fetch(`${url}/_svc/peers/refresh`, { method: 'POST' });
          const { peers } = (await (await fetch(`${url}/_svc/peers`)).json()) as {
            peers: Array<{ peerId: string; reachable: boolean }>;
          };
          const reachable = new Set(peers.filter((p) => p.reachable).map((p) => p.peerId));
          return this.sellers.every((s) => reachable.has(s.address.slice(2)));
        },
        90_000,
        `${url} reaches all ${this.sellers.length} sellers`,
      );
    }
  }

  /** The buyers' process ids (the gateway process runs the second buyer). */
  pids(): { buyer: number; gateway: number } {
    return { buyer: this.buyer?.pid ?? 0, gateway: this.gateway?.pid ?? 0 };
  }

  /** Stops every process this network started, including stopped (SIGSTOP) ones. */
  async stop(): Promise<void> {
    try {
      process.kill(this.chain.anvil.pid, 'SIGCONT');
    } catch {
      // already gone
    }
    await this.gateway?.stop().catch(() => undefined);
    await this.buyer?.stop().catch(() => undefined);
    await Promise.all(this.sellers.map((seller) => seller.process.stop().catch(() => undefined)));
    await this.bootstrap.stop();
    await this.upstream.close();
    await this.chain.stop();
    for (const dir of this.dirs) removeTempDir(dir);
  }
}

/** Resident memory of a process, in bytes (0 once it is gone). */
export function rssOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}
