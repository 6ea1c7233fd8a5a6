/**
 * The buyer's request records, journaled to `<data-dir>/requests.sqlite` so that
 * `GET /_svc/requests/<id>` answers after a restart (docs/decisions/122-request-journal.md).
 * A record is written before the buyer signs the voucher for its request, so a voucher never
 * exists without its record. Records no voucher depends on are written in short batches
 * (docs/decisions/157-buyer-cpu-per-request.md). Retention is bounded by age and count.
 */
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { ensureDir } from '../config/index.js';
import { decodeRequestRecord, encodeRequestRecord, type RequestRecord } from '../protocol/index.js';

export type { RequestRecord };

export interface RequestJournalOptions {
  /** Records older than this are pruned (default 7 days). */
  retentionMs?: number;
  /** At most this many records are kept (default 200,000). */
  maxRecords?: number;
  clock?: () => number;
  /** A batched write that failed (its records stay waiting and go with the next write). */
  onFlushError?: (error: unknown) => void;
}

const SCHEMA = `CREATE TABLE IF NOT EXISTS requests (
  id TEXT PRIMARY KEY, at INTEGER NOT NULL, record TEXT NOT NULL, progress TEXT);
CREATE INDEX IF NOT EXISTS requests_at ON requests (at);
CREATE TABLE IF NOT EXISTS journal_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);`;

/** An open record, with its paid stream's progress when one was journaled. */
export interface OpenRecord {
  record: RequestRecord;
  /** Text of src/buyer/streamProgress.ts, undefined when none was written. */
  progress: string | undefined;
}

/** Prune at most this often (every write checks). */
const PRUNE_EVERY_MS = 60_000;

/** A record put with `putSoon` is journaled at most this long after (with the others due). */
export const SOON_MS = 20;
/** …or at once when this many are waiting. */
const SOON_MAX = 256;

/** Journals with records waiting: written when the process exits (not when it is killed). */
const waiting = new Set<RequestRecords>();
let exitHooked = false;
function flushAllOnExit(): void {
  for (const records of waiting) records.flushQuietly();
}

/** Request records: a small memory cache over a durable journal (or memory only, for tests). */
export class RequestRecords {
  private readonly recent = new Map<string, RequestRecord>();
  private readonly db: DatabaseSync | undefined;
  private readonly putStmt: StatementSync | undefined;
  private readonly getStmt: StatementSync | undefined;
  private readonly retentionMs: number;
  private readonly maxRecords: number;
  private readonly clock: () => number;
  private readonly onFlushError: (error: unknown) => void;
  private sinceMs: number;
  private prunedAt = 0;
  /** Records put with `putSoon`, not yet in the journal (latest version per id). */
  private readonly pending = new Map<string, RequestRecord>();
  private pendingTimer: NodeJS.Timeout | undefined;
  /** Ids whose journaled row carries a paid stream's progress (src/buyer/streamProgress.ts). */
  private readonly withProgress = new Set<string>();

  /** `dataDir` undefined: memory only (the last 10,000 records, lost on restart). */
  constructor(dataDir?: string, options: RequestJournalOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.onFlushError = options.onFlushError ?? (() => {});
    this.retentionMs = options.retentionMs ?? 7 * 86_400_000;
    this.maxRecords = options.maxRecords ?? 200_000;
    this.sinceMs = this.clock();
    if (dataDir === undefined) return;
    const db = new DatabaseSync(join(ensureDir(dataDir), 'requests.sqlite'));
    // WAL with synchronous=NORMAL survives a killed process (not a power cut) at ~50 µs a write.
    // A small page cache: the journal is written per request and read rarely.
    db.exec(
      'PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA cache_size = -512;',
    );
    db.exec(SCHEMA);
    // A journal from before streams journaled their progress (docs/decisions/154-late-voucher-after-a-crash.md).
    const columns = db.prepare('PRAGMA table_info(requests)').all();
    if (!columns.some((column) => column.name === 'progress')) {
      db.exec('ALTER TABLE requests ADD COLUMN progress TEXT');
    }
    db.prepare('INSERT OR IGNORE INTO journal_meta (name, value) VALUES (?, ?)').run(
      'since',
      this.sinceMs,
    );
    const since = db.prepare("SELECT value FROM journal_meta WHERE name = 'since'").get();
    this.sinceMs = Number(since?.value ?? this.sinceMs);
    this.db = db;
    this.putStmt = db.prepare(
      'INSERT OR REPLACE INTO requests (id, at, record, progress) VALUES (?, ?, ?, ?)',
    );
    this.getStmt = db.prepare('SELECT record FROM requests WHERE id = ?');
    this.prune();
  }

  /**
   * Free answers whose receipt was refused since `sinceMs`, per seller: how many, and when the
   * last was. A paid answer's refused receipt is kept with its voucher instead (the payments
   * store's refused claims), so it is not counted here.
   */
  refusedFreeReceiptsSince(sinceMs: number): Map<string, { count: number; lastAt: number }> {
    const refused = new Map<string, { count: number; lastAt: number }>();
    if (!this.db) return refused;
    const rows = this.db
      .prepare(
        `SELECT json_extract(record, '$.peerId') AS peer, json_extract(record, '$.costUsd') AS cost,
                at FROM requests
          WHERE at >= ? AND json_extract(record, '$.receipt') <> 'verified'
            AND json_extract(record, '$.peerId') IS NOT NULL`,
      )
      .all(sinceMs) as { peer: string; cost: string; at: number }[];
    for (const { peer, cost, at } of rows) {
      if (!/^0(?:\.0+)?$/.test(cost)) continue;
      const seen = refused.get(peer);
      refused.set(peer, { count: (seen?.count ?? 0) + 1, lastAt: Math.max(seen?.lastAt ?? 0, at) });
    }
    return refused;
  }

  /**
   * Stores (or replaces) a record, with an open paid stream's `progress` (dropped by the next put
   * without one); durable when this returns, together with every record waiting from `putSoon`.
   */
  put(record: RequestRecord, progress?: string): void {
    const stamped = this.remember(record);
    if (!this.putStmt || !this.db) return;
    this.pending.delete(record.requestId);
    if (progress === undefined) this.withProgress.delete(record.requestId);
    else this.withProgress.add(record.requestId);
    if (this.pending.size === 0) {
      this.write(stamped, progress);
    } else {
      this.db.exec('BEGIN');
      try {
        this.writePending();
        this.write(stamped, progress);
        this.db.exec('COMMIT');
      } catch (error) {
        this.db.exec('ROLLBACK');
        throw error;
      }
    }
    this.pruneWhenDue();
  }

  /**
   * Stores a record that no voucher depends on (docs/decisions/157-buyer-cpu-per-request.md):
   * `get` answers it at once, the journal gets it within SOON_MS in one transaction with the
   * others. A record replacing a journaled row with a paid stream's progress is written at once:
   * otherwise a crash could leave that open row for the restart to pay again.
   */
  putSoon(record: RequestRecord): void {
    if (!this.db || this.withProgress.has(record.requestId)) {
      this.put(record);
      return;
    }
    this.pending.set(record.requestId, this.remember(record));
    if (this.pending.size >= SOON_MAX) {
      this.flush();
      return;
    }
    if (this.pendingTimer) return;
    this.pendingTimer = setTimeout(() => this.flushQuietly(), SOON_MS);
    this.pendingTimer.unref();
    waiting.add(this);
    if (!exitHooked) {
      exitHooked = true;
      process.once('exit', flushAllOnExit);
    }
  }

  /** Journals the records waiting from `putSoon` (one transaction). */
  flush(): void {
    if (this.pendingTimer) clearTimeout(this.pendingTimer);
    this.pendingTimer = undefined;
    waiting.delete(this);
    const db = this.db;
    if (!db || this.pending.size === 0) return;
    db.exec('BEGIN');
    try {
      this.writePending();
      db.exec('COMMIT');
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
    this.pruneWhenDue();
  }

  /** `flush` off the request path: a failure is reported, not thrown (the records stay waiting). */
  flushQuietly(): void {
    try {
      this.flush();
    } catch (error) {
      this.onFlushError(error);
    }
  }

  private remember(record: RequestRecord): RequestRecord {
    const stamped = record.at === undefined ? { ...record, at: this.clock() } : record;
    this.recent.delete(record.requestId);
    this.recent.set(record.requestId, stamped);
    // With a journal the cache only spares reads of recent records; memory only, it is the store.
    if (this.recent.size > (this.db ? 1_000 : 10_000)) {
      const oldest = this.recent.keys().next().value;
      if (oldest !== undefined) this.recent.delete(oldest);
    }
    return stamped;
  }

  private writePending(): void {
    for (const record of this.pending.values()) this.write(record, undefined);
    this.pending.clear();
  }

  private write(stamped: RequestRecord, progress: string | undefined): void {
    this.putStmt?.run(
      stamped.requestId,
      stamped.at ?? 0,
      encodeRequestRecord(stamped),
      progress ?? null,
    );
  }

  private pruneWhenDue(): void {
    if (this.clock() - this.prunedAt > PRUNE_EVERY_MS) this.prune();
  }

  get(requestId: string): RequestRecord | undefined {
    const cached = this.recent.get(requestId) ?? this.pending.get(requestId);
    if (cached || !this.getStmt) return cached;
    const row = this.getStmt.get(requestId);
    if (!row) return undefined;
    try {
      return decodeRequestRecord(String(row.record));
    } catch {
      return undefined;
    }
  }

  /** Records still open (their request was in flight when the buyer stopped). */
  open(): RequestRecord[] {
    return this.openWithProgress().map((open) => open.record);
  }

  /** Open records with their journaled stream progress (a record kept in memory only has none). */
  openWithProgress(): OpenRecord[] {
    if (!this.db) {
      return [...this.recent.values()]
        .filter((r) => !r.completed && !r.errorCode)
        .map((record) => ({ record, progress: undefined }));
    }
    this.flush();
    const rows = this.db
      .prepare(`SELECT record, progress FROM requests WHERE record LIKE '%"completed":false%'`)
      .all();
    const out: OpenRecord[] = [];
    for (const row of rows) {
      try {
        const record = decodeRequestRecord(String(row.record));
        const progress = typeof row.progress === 'string' ? row.progress : undefined;
        if (!record.completed && !record.errorCode) out.push({ record, progress });
      } catch {
        // an unreadable row is not a record
      }
    }
    return out;
  }

  /**
   * Closes an open record a stopped buyer left (`buyer_restarted`) at what was committed for it:
   * the late voucher's amount, or 0 (src/buyer/closeOpenRecords.ts).
   */
  closeRestarted(record: RequestRecord, costUsd: string): void {
    this.put({ ...record, costUsd, errorCode: 'buyer_restarted' });
  }

  /** Closes every open record at cost 0 (`buyer_restarted`); returns how many. */
  closeOpen(): number {
    const open = this.open();
    for (const record of open) this.closeRestarted(record, '0.000000');
    return open.length;
  }

  /** Every request handled since this epoch ms has its record here (or had one, if pruned later). */
  get journalSinceMs(): number {
    return this.sinceMs;
  }

  get size(): number {
    return this.recent.size;
  }

  close(): void {
    this.flush();
    this.db?.close();
  }

  /** Drops records past retention or count; moves `since` past what was dropped. */
  private prune(): void {
    const db = this.db;
    if (!db) return;
    const now = this.clock();
    this.prunedAt = now;
    let cutoff = now - this.retentionMs;
    const nth = db
      .prepare('SELECT at FROM requests ORDER BY at DESC LIMIT 1 OFFSET ?')
      .get(this.maxRecords);
    if (nth && Number(nth.at) + 1 > cutoff) cutoff = Number(nth.at) + 1;
    if (cutoff <= this.sinceMs) return;
    db.prepare('DELETE FROM requests WHERE at < ?').run(cutoff);
    this.sinceMs = cutoff;
    db.prepare("UPDATE journal_meta SET value = ? WHERE name = 'since'").run(cutoff);
  }
}
