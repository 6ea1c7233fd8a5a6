/** Runs `svc indexer start` in a child process (several indexers sharing one database). */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface IndexerProcess {
  url: string;
  pid: number;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
  /** SIGKILL (no cleanup: the process just dies) and wait. */
  kill(): Promise<void>;
}

const CLI = fileURLToPath(new URL('../../cli/index.ts', import.meta.url));

/** Starts the CLI's indexer on a free port and waits until it listens. */
export async function startIndexerProcess(args: {
  dataDir: string;
  databaseUrl?: string;
  /** Extra environment (SVC_BOOTSTRAP, SVC_RPC_URL...). */
  env?: Record<string, string>;
  extraArgs?: string[];
}): Promise<IndexerProcess> {
  const argv = ['--import', 'tsx', CLI, '--data-dir', args.dataDir, '--log-level', 'warn'];
  argv.push('indexer', 'start', '--port', '0', ...(args.extraArgs ?? []));
  if (args.databaseUrl) argv.push('--database-url', args.databaseUrl);
  const child: ChildProcess = spawn(process.execPath, argv, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_NO_WARNINGS: '1', ...args.env },
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`indexer process did not start: ${output}`)),
      // A loaded machine (the whole suite in parallel) can take a while to load the CLI via tsx.
      60_000,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /indexer listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`indexer process exited (${code}): ${output}`));
    });
  });
  const end = (signal: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  return { url, pid: child.pid ?? 0, stop: () => end('SIGTERM'), kill: () => end('SIGKILL') };
}
