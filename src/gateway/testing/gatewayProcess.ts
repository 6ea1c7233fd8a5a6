/**
 * Runs `svc gateway start` in a child process: forwarding to a buyer (a second gateway sharing one
 * database) or, without `buyerUrl`, with its own buyer in process on a free loopback port.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface GatewayProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const CLI = fileURLToPath(new URL('../../cli/index.ts', import.meta.url));

/** Starts the CLI's gateway on a free port and waits until it listens. */
export async function startGatewayProcess(args: {
  dataDir: string;
  /** A running buyer to forward to; absent = the gateway runs its own. */
  buyerUrl?: string;
  databaseUrl?: string;
  /** Extra node flags (e.g. `--cpu-prof` for profiling). */
  nodeArgs?: string[];
  /** The node arguments that run the CLI (a bench passes the compiled one); default the sources. */
  cli?: string[];
}): Promise<GatewayProcess> {
  const argv = [
    ...(args.nodeArgs ?? []),
    ...(args.cli ?? ['--import', 'tsx', CLI]),
    '--data-dir',
    args.dataDir,
    '--log-level',
    'warn',
    'gateway',
  ];
  if (args.databaseUrl) argv.push('--database-url', args.databaseUrl);
  argv.push('start', '--port', '0');
  argv.push(...(args.buyerUrl ? ['--buyer-url', args.buyerUrl] : ['--buyer-port', '0']));
  const child: ChildProcess = spawn(process.execPath, argv, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_NO_WARNINGS: '1' },
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    // Generous: on 2 shared cores a gateway process (TypeScript through tsx, its buyer, SQLite or
    // PostgreSQL) beside the heavier scenario tests took over 30 s to start.
    const timer = setTimeout(
      () => reject(new Error(`gateway process did not start: ${output}`)),
      90_000,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /gateway listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway process exited (${code}): ${output}`));
    });
  });
  return {
    url,
    pid: child.pid ?? 0,
    stop: () =>
      new Promise<void>((resolve) => {
        // A killed child (kill -9) has a signalCode and no exitCode.
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
