/**
 * Starts the anvil binary shipped by `@foundry-rs/anvil` on 127.0.0.1, waits until its RPC
 * answers, and stops it cleanly. Port 0 picks a free port (anvil prints the one it bound).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { SvcError } from '../errors/index.js';

export interface StartAnvilOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Load state from this file at start and dump to it on exit (`anvil --state`). */
  stateFile?: string;
  /** Chain id (default 31337). */
  chainId?: number;
  /** Mine a block every this many seconds instead of one per transaction (`anvil --block-time`). */
  blockTimeSeconds?: number;
  /** Milliseconds to wait for the RPC to answer (default 30 s). */
  readyTimeoutMs?: number;
}

export interface AnvilProcess {
  rpcUrl: string;
  port: number;
  chainId: number;
  pid: number;
  /** Stops anvil (SIGINT so a state file is dumped) and waits for it to exit. */
  stop(): Promise<void>;
}

const ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64' };

/** Path of the anvil executable from the npm package (platform package first). */
export function anvilBinaryPath(): string {
  const require = createRequire(import.meta.url);
  const candidates: string[] = [];
  const arch = ARCH[process.arch] ?? process.arch;
  try {
    const pkg = require.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`);
    candidates.push(
      join(dirname(pkg), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil'),
    );
  } catch {
    // Fall through to the wrapper script.
  }
  try {
    const pkg = require.resolve('@foundry-rs/anvil/package.json');
    candidates.push(join(dirname(pkg), 'bin.mjs'));
  } catch {
    // Not installed.
  }
  const found = candidates.find((path) => existsSync(path));
  if (!found) {
    throw new SvcError('chain_unavailable', {
      message: 'The anvil binary is missing: reinstall with `npm ci` (package @foundry-rs/anvil).',
    });
  }
  return found;
}

/** Spawns anvil and resolves once its JSON-RPC answers `eth_chainId`. */
export async function startAnvil(options: StartAnvilOptions = {}): Promise<AnvilProcess> {
  const chainId = options.chainId ?? 31337;
  const args = [
    '--host',
    '127.0.0.1',
    '--port',
    String(options.port ?? 0),
    '--chain-id',
    String(chainId),
  ];
  if (options.stateFile) args.push('--state', options.stateFile);
  if (options.blockTimeSeconds !== undefined) {
    args.push('--block-time', String(options.blockTimeSeconds));
  }
  const binary = anvilBinaryPath();
  const child = binary.endsWith('.mjs')
    ? spawn(process.execPath, [binary, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const port = await waitForListening(child, options.readyTimeoutMs ?? 30_000);
    const rpcUrl = `http://127.0.0.1:${port}`;
    await waitForRpc(rpcUrl, options.readyTimeoutMs ?? 30_000);
    let stopping: Promise<void> | undefined;
    return {
      rpcUrl,
      port,
      chainId,
      pid: child.pid ?? -1,
      stop() {
        stopping ??= (async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(timer);
        })();
        return stopping;
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw error;
  }
}

function waitForListening(child: ChildProcess, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(
      () => fail(new Error(`anvil did not start within ${timeoutMs} ms: ${output.slice(-500)}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /Listening on [\d.]+:(\d+)/.exec(output);
      if (match) {
        cleanup();
        // Keep draining output so anvil never blocks on a full pipe.
        child.stdout?.resume();
        child.stderr?.resume();
        resolve(Number(match[1]));
      }
    };
    const onExit = (code: number | null) =>
      fail(new Error(`anvil exited with code ${code}: ${output.slice(-500)}`));
    function cleanup() {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
    }
    function fail(error: Error) {
      cleanup();
      reject(new SvcError('chain_unavailable', { message: error.message, cause: error }));
    }
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
  });
}

async function waitForRpc(rpcUrl: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let delayMs = 20;
  for (;;) {
    try {
      const response = await fetch(rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      });
      if (response.ok) return;
    } catch {
      // Not up yet.
    }
    if (Date.now() > deadline) {
      throw new SvcError('chain_unavailable', { message: `anvil at ${rpcUrl} never answered` });
    }
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    delayMs = Math.min(delayMs * 2, 500);
  }
}
