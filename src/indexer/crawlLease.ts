/**
 * Who crawls (decision 132). Several indexers sharing one PostgreSQL database serve the same
 * snapshot, but only one crawls the network and reads the chain: the holder of a session-level
 * advisory lock on a connection of its own. The server frees the lock the moment that connection
 * drops (the process died, was killed or lost the network), and the next `tryAcquire` of another
 * indexer takes over. With SQLite the one process always crawls.
 */
import pg from 'pg';

export interface CrawlLease {
  /** True when this process holds (or just took) the lease. */
  tryAcquire(): Promise<boolean>;
  release(): Promise<void>;
}

/** The lease of a single-process store: always held. */
export const soleCrawler: CrawlLease = {
  tryAcquire: async () => true,
  release: async () => undefined,
};

/** Advisory-lock key naming "the svc indexer crawler" in a shared database. */
const LOCK_KEY = 8_380_132;

/** A lease over `pg_try_advisory_lock` on a dedicated connection to `databaseUrl`. */
export function postgresCrawlLease(databaseUrl: string): CrawlLease {
  let client: pg.Client | undefined;
  let held = false;
  const drop = () => {
    held = false;
    const old = client;
    client = undefined;
    void old?.end().catch(() => undefined);
  };
  return {
    async tryAcquire() {
      try {
        if (!client) {
          const fresh = new pg.Client({
            connectionString: databaseUrl,
            connectionTimeoutMillis: 5000,
          });
          fresh.on('error', () => {
            if (client === fresh) drop();
          });
          await fresh.connect();
          client = fresh;
        }
        if (held) {
          // Prove the connection (and with it the lock) is still alive.
          await client.query('SELECT 1');
          return true;
        }
        const result = await client.query<{ locked: boolean }>(
          'SELECT pg_try_advisory_lock($1) AS locked',
          [LOCK_KEY],
        );
        held = result.rows[0]?.locked === true;
        return held;
      } catch {
        drop();
        return false;
      }
    },
    async release() {
      const old = client;
      client = undefined;
      held = false;
      await old?.end().catch(() => undefined);
    },
  };
}
