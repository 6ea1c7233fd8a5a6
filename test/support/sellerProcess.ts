/**
 * A real seller in its own process (`svc seller start`), listening on a fixed loopback port from
 * its own data dir, so a test can kill it with SIGKILL and start it again with the same identity
 * at the same address, as a seller restarting after a crash or an upgrade would.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

export interface SellerProcessOptions {
  dataDir: string;
  /** Loopback TCP port the seller listens on, the same after every restart. */
  port: number;
  bootstrap: string[];
  /** The `seller` section of its config (providers, display name, limits). */
  seller: Record<string, unknown>;
  /** More config sections (`chain` for a paid seller). */
  config?: Record<string, unknown>;
  /** Extra `svc seller start` flags (e.g. `--free`). */
  flags?: string[];
  env?: NodeJS.ProcessEnv;
}

/** One seller process at a time; `start` again after `kill` restarts it. */
export class SellerProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;
  /** The seller's peer id (known after the first start). */
  peerId = '';

  constructor(private readonly options: SellerProcessOptions) {
    const config = {
      ...options.config,
      network: {
        listen: [`/ip4/127.0.0.1/tcp/${options.port}`],
        bootstrap: options.bootstrap,
      },
      seller: options.seller,
    };
    writeFileSync(join(options.dataDir, 'config.json'), JSON.stringify(config));
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && !this.child.signalCode;
  }

  /** Starts the process and resolves with the seller's peer id once it serves. */
  async start(): Promise<string> {
    const argv = [BIN, '--data-dir', this.options.dataDir, '--log-level', 'warn'];
    argv.push('seller', 'start', ...(this.options.flags ?? []));
    const child = spawn(process.execPath, argv, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_NO_WARNINGS: '1', ...this.options.env },
    });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    let output = '';
    const started = new Promise<string>((resolve, reject) => {
      // Generous: twenty sellers starting on a shared 2-core box take minutes (test/churn.test.ts).
      const timer = setTimeout(() => reject(new Error(`seller did not start: ${output}`)), 180_000);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const match = /seller ([0-9a-f]{40}) .* running/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      void this.exited?.then(() => {
        clearTimeout(timer);
        reject(new Error(`seller exited: ${output}`));
      });
    });
    let peerId: string;
    try {
      peerId = await started;
    } catch (error) {
      // A start that timed out leaves no process behind to hold the port of the next try.
      await this.kill();
      throw error;
    }
    this.peerId = peerId;
    return peerId;
  }

  /** kill -9, and waits for the exit. */
  kill(): Promise<void> {
    return this.end('SIGKILL');
  }

  /** SIGTERM, and waits for the exit. */
  stop(): Promise<void> {
    return this.end('SIGTERM');
  }

  /** Sends `signal` to a running seller (SIGSTOP cuts it off with its connections open). */
  signal(signal: NodeJS.Signals): void {
    if (this.running) this.child?.kill(signal);
  }

  private async end(signal: NodeJS.Signals): Promise<void> {
    // A stopped (SIGSTOP) seller would never handle a SIGTERM.
    if (this.running && signal !== 'SIGKILL') this.child?.kill('SIGCONT');
    if (this.running) this.child?.kill(signal);
    await this.exited;
  }
}
