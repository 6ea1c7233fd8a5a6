/**
 * Runs `svc buyer start` in a child process on a PaidNetwork's buyer data dir (its identity, its
 * journal, its channels), so a test can kill -9 the buyer mid-request and start it again.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeDeployment } from '../../chain/index.js';
import { loopbackNetworkConfig } from '../../network/testing/loopback.js';
import { waitFor } from '../../testing/index.js';
import type { PaidNetwork } from './paidFixture.js';

export interface BuyerProcess {
  url: string;
  pid: number;
  /** SIGTERM, and waits for the exit (a child already killed resolves at once). */
  stop(): Promise<void>;
  /** kill -9, and waits for the exit. */
  kill(): Promise<void>;
}

const CLI = fileURLToPath(new URL('../../cli/index.ts', import.meta.url));

/** Writes the config and chain deployment `svc buyer start` needs to join `net` from its dir. */
export function configureBuyerDir(net: PaidNetwork): void {
  writeDeployment(net.buyerDir, net.chain.deployment);
  const config = {
    network: loopbackNetworkConfig({ bootstrap: [net.bootstrap.multiaddrs()[0]!.toString()] }),
    // A brand-new seller has no on-chain history: admit unscored sellers.
    buyer: { routingPreferences: { minTrustScore: 0 } },
    chain: { payments: { channelLockUsd: '0.20' } },
  };
  writeFileSync(join(net.buyerDir, 'config.json'), JSON.stringify(config));
}

/** Starts the buyer on `port` (0: a free one) and waits until it listens. */
export async function startBuyerProcess(dataDir: string, port = 0): Promise<BuyerProcess> {
  const argv = ['--import', 'tsx', CLI, '--data-dir', dataDir, '--log-level', 'warn'];
  argv.push('buyer', 'start', '--port', String(port));
  const child: ChildProcess = spawn(process.execPath, argv, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_NO_WARNINGS: '1' },
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`buyer process did not start: ${output}`)),
      60_000,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /buyer listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`buyer process exited: ${output}`));
    });
  });
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return { url, pid: child.pid ?? 0, stop: () => end('SIGTERM'), kill: () => end('SIGKILL') };
}

/** Refreshes the buyer's directory until `peerId` is reachable. */
export async function discoverFrom(url: string, peerId: string): Promise<void> {
  await waitFor(
    async () => {
      await fetch(`${url}/_svc/peers/refresh`, { method: 'POST' });
      const reply = await fetch(`${url}/_svc/peers`);
      const { peers } = (await reply.json()) as {
        peers: Array<{ peerId: string; reachable: boolean }>;
      };
      return peers.some((peer) => peer.peerId === peerId && peer.reachable);
    },
    60_000,
    `seller ${peerId} reachable from the buyer process`,
  );
}
