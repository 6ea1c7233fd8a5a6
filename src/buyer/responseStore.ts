/**
 * The responses the buyer returned on `/v1/responses`, kept per identity in
 * `<data-dir>/buyer/responses.sqlite` so that `previous_response_id` and `item_reference` work
 * whichever seller serves the follow-up (docs/decisions/173-responses-state-kept-by-the-buyer.md).
 * Bounded per identity in bytes and in age; nothing here ever leaves the machine.
 *
 * Writes are lazy: a kept response waits in memory (where `get` already finds it) and goes to
 * SQLite with the others due, in one transaction, at most SOON_MS later. The database is opened
 * on first use, so a buyer whose clients never use the Responses API never opens it.
 */
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { ensureDir } from '../config/index.js';

type Json = Record<string, unknown>;

/** One response as the client saw it, with what it needs to be replayed elsewhere. */
export interface StoredResponse {
  id: string;
  /** The `previous_response_id` of its request: the chain it continues. */
  previousId: string | undefined;
  /** Its request's own input items (item references left as they came). */
  input: Json[];
  /** Its output items, as returned to the client. */
  output: Json[];
  peerId: string;
  serviceId: string;
  /** The seller speaks the responses format and said it stored the response itself. */
  held: boolean;
  /** When it was kept (epoch ms). */
  at: number;
  /** Its stored size (0 while it waits to be written). */
  bytes?: number;
}

export interface ResponseStoreOptions {
  /** Most bytes kept per identity (oldest removed first); 0 keeps nothing. */
  maxBytes: number;
  maxAgeMs: number;
  clock?: () => number;
  /** A batched write that failed (the responses stay waiting and go with the next write). */
  onFlushError?: (error: unknown) => void;
}

const SCHEMA = `CREATE TABLE IF NOT EXISTS responses (
  identity TEXT NOT NULL, id TEXT NOT NULL, at INTEGER NOT NULL, previous TEXT,
  peer TEXT NOT NULL, service TEXT NOT NULL, held INTEGER NOT NULL, bytes INTEGER NOT NULL,
  body TEXT NOT NULL, PRIMARY KEY (identity, id));
CREATE INDEX IF NOT EXISTS responses_at ON responses (identity, at);
CREATE TABLE IF NOT EXISTS items (
  identity TEXT NOT NULL, id TEXT NOT NULL, response TEXT NOT NULL, at INTEGER NOT NULL,
  PRIMARY KEY (identity, id)) WITHOUT ROWID;`;

/** A kept response reaches the database at most this long after (with the others due). */
const SOON_MS = 20;
/** …or at once when this many wait. */
const SOON_MAX = 64;
/** Most responses waiting in memory while writes fail. */
const MAX_WAITING = 1_024;
/** Old and oversized responses are removed at most this often (and when much was written). */
const PRUNE_EVERY_MS = 60_000;

function keyOf(identity: string, id: string): string {
  return `${identity}\u0000${id}`;
}

/** Ids of the items a response holds (input and output items that carry one). */
function itemIds(response: StoredResponse): string[] {
  const ids: string[] = [];
  for (const item of [...response.input, ...response.output]) {
    if (typeof item.id === 'string' && item.type !== 'item_reference') ids.push(item.id);
  }
  return ids;
}

interface Statements {
  put: StatementSync;
  putItem: StatementSync;
  get: StatementSync;
  owner: StatementSync;
}

export class ResponseStore {
  private readonly clock: () => number;
  private readonly onFlushError: (error: unknown) => void;
  private db: DatabaseSync | undefined;
  private statements: Statements | undefined;
  private readonly pending = new Map<string, { identity: string; response: StoredResponse }>();
  /** Items of pending responses: identity + item id -> response id. */
  private readonly pendingItems = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private prunedAt = 0;
  private bytesSincePrune = 0;
  private closed = false;

  constructor(
    private readonly dataDir: string,
    private readonly options: ResponseStoreOptions,
  ) {
    this.clock = options.clock ?? Date.now;
    this.onFlushError = options.onFlushError ?? (() => {});
  }

  /** False when the configuration keeps nothing. */
  get enabled(): boolean {
    return this.options.maxBytes > 0;
  }

  /** Keeps a response; `get` finds it at once, the database within SOON_MS. */
  keep(identity: string, response: StoredResponse): void {
    if (!this.enabled || this.closed) return;
    this.pending.set(keyOf(identity, response.id), { identity, response });
    for (const itemId of itemIds(response))
      this.pendingItems.set(keyOf(identity, itemId), response.id);
    if (this.pending.size >= SOON_MAX) {
      this.flushQuietly();
      // A database that keeps failing must not make memory grow: the oldest waiting go.
      for (const key of this.pending.keys()) {
        if (this.pending.size <= MAX_WAITING) break;
        this.pending.delete(key);
      }
      return;
    }
    if (this.timer) return;
    this.timer = setTimeout(() => this.flushQuietly(), SOON_MS);
    this.timer.unref();
  }

  /** The response `id` kept for `identity`, or undefined. */
  get(identity: string, id: string): StoredResponse | undefined {
    if (!this.enabled) return undefined;
    const waiting = this.pending.get(keyOf(identity, id));
    if (waiting) return this.fresh(waiting.response);
    const row = this.statementsOf()?.get.get(identity, id);
    if (!row) return undefined;
    try {
      const body = JSON.parse(String(row.body)) as { input: Json[]; output: Json[] };
      return this.fresh({
        id,
        previousId: typeof row.previous === 'string' ? row.previous : undefined,
        input: body.input,
        output: body.output,
        peerId: String(row.peer),
        serviceId: String(row.service),
        held: Number(row.held) === 1,
        at: Number(row.at),
        bytes: Number(row.bytes),
      });
    } catch {
      return undefined;
    }
  }

  /** The id of the response holding item `itemId` for `identity`, or undefined. */
  ownerOfItem(identity: string, itemId: string): string | undefined {
    if (!this.enabled) return undefined;
    const waiting = this.pendingItems.get(keyOf(identity, itemId));
    if (waiting) return waiting;
    const row = this.statementsOf()?.owner.get(identity, itemId);
    return row ? String(row.response) : undefined;
  }

  /** Writes what waits (one transaction). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return;
    const statements = this.statementsOf();
    const db = this.db;
    if (!db || !statements) return;
    const { put, putItem } = statements;
    db.exec('BEGIN');
    try {
      for (const { identity, response } of this.pending.values()) {
        const body = JSON.stringify({ input: response.input, output: response.output });
        put.run(
          identity,
          response.id,
          response.at,
          response.previousId ?? null,
          response.peerId,
          response.serviceId,
          response.held ? 1 : 0,
          body.length,
          body,
        );
        for (const itemId of itemIds(response))
          putItem.run(identity, itemId, response.id, response.at);
        this.bytesSincePrune += body.length;
      }
      db.exec('COMMIT');
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
    this.pending.clear();
    this.pendingItems.clear();
    if (
      this.clock() - this.prunedAt > PRUNE_EVERY_MS ||
      this.bytesSincePrune > this.options.maxBytes / 8
    ) {
      this.prune();
    }
  }

  close(): void {
    try {
      this.flush();
    } finally {
      this.closed = true;
      this.db?.close();
      this.db = undefined;
      this.statements = undefined;
    }
  }

  private flushQuietly(): void {
    try {
      this.flush();
    } catch (error) {
      this.onFlushError(error);
    }
  }

  /** A response past its age is gone, even before the next prune removes its row. */
  private fresh(response: StoredResponse): StoredResponse | undefined {
    return this.clock() - response.at > this.options.maxAgeMs ? undefined : response;
  }

  /** The prepared statements, the database opened on first use (undefined once closed). */
  private statementsOf(): Statements | undefined {
    if (this.statements || this.closed) return this.statements;
    const db = new DatabaseSync(join(ensureDir(join(this.dataDir, 'buyer')), 'responses.sqlite'));
    db.exec(
      'PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA cache_size = -512;',
    );
    db.exec(SCHEMA);
    this.db = db;
    this.statements = {
      put: db.prepare(
        'INSERT OR REPLACE INTO responses (identity, id, at, previous, peer, service, held, bytes, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      putItem: db.prepare(
        'INSERT OR REPLACE INTO items (identity, id, response, at) VALUES (?, ?, ?, ?)',
      ),
      get: db.prepare(
        'SELECT at, previous, peer, service, held, bytes, body FROM responses WHERE identity = ? AND id = ?',
      ),
      owner: db.prepare('SELECT response FROM items WHERE identity = ? AND id = ?'),
    };
    this.prune();
    return this.statements;
  }

  /** Removes responses past their age, then each identity's oldest beyond its byte budget. */
  private prune(): void {
    const db = this.db;
    if (!db) return;
    const now = this.clock();
    this.prunedAt = now;
    this.bytesSincePrune = 0;
    const cutoff = now - this.options.maxAgeMs;
    db.prepare('DELETE FROM responses WHERE at < ?').run(cutoff);
    db.prepare('DELETE FROM items WHERE at < ?').run(cutoff);
    const over = db
      .prepare('SELECT identity FROM responses GROUP BY identity HAVING SUM(bytes) > ?')
      .all(this.options.maxBytes);
    for (const row of over) {
      const identity = String(row.identity);
      // The newest response that no longer fits: it and everything older go.
      const first = db
        .prepare(
          `SELECT at FROM (SELECT at, SUM(bytes) OVER (ORDER BY at DESC, id DESC) AS total
             FROM responses WHERE identity = ?) WHERE total > ? LIMIT 1`,
        )
        .get(identity, this.options.maxBytes);
      if (!first) continue;
      db.prepare('DELETE FROM responses WHERE identity = ? AND at <= ?').run(identity, first.at);
      db.prepare('DELETE FROM items WHERE identity = ? AND at <= ?').run(identity, first.at);
    }
  }
}
