/** One component process of the local network: spawned, logged to a file, stopped cleanly. */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import type { RunningService } from '../node/index.js';

export interface SpawnOptions {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  logFile: string;
  /** Start in its own process group so it survives the parent (for --detach). */
  detached?: boolean;
}

/** A running component. */
export class ComponentProcess implements RunningService {
  readonly name: string;
  readonly logFile: string;
  readonly child: ChildProcess;
  /** Resolves with the exit code (or signal name) when the process ends. */
  readonly exited: Promise<number | string>;
  private exitedFlag = false;
  private readonly detached: boolean;

  constructor(options: SpawnOptions) {
    this.name = options.name;
    this.logFile = options.logFile;
    this.detached = options.detached ?? false;
    const log = openSync(options.logFile, 'a');
    try {
      this.child = spawn(options.command, options.args, {
        env: options.env ?? process.env,
        stdio: ['ignore', log, log],
        detached: options.detached ?? false,
      });
    } finally {
      closeSync(log);
    }
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exitedFlag = true;
        resolve(code ?? signal ?? 'unknown');
      });
      this.child.once('error', (error) => {
        this.exitedFlag = true;
        resolve(error.message);
      });
    });
  }

  /** Lets the parent exit while the component keeps running (`svc up --detach`). */
  release(): void {
    this.child.unref();
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.exitedFlag;
  }

  /**
   * SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. A component runs in
   * its own process group, so the signal also reaches what it started (anvil under the chain).
   */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.running) return;
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    try {
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  private signal(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(this.detached ? -pid : pid, signal);
    } catch {
      // Already gone.
    }
  }

  /** The last `lines` lines of the component's log. */
  logTail(lines = 20): string {
    return tailOf(this.logFile, lines);
  }
}

/** Last lines of a file ('' when unreadable). */
export function tailOf(path: string, lines: number): string {
  try {
    return readFileSync(path, 'utf8')
      .split('\n')
      .slice(-lines - 1)
      .join('\n')
      .trimEnd();
  } catch {
    return '';
  }
}

/** True when a pid is alive. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
