/**
 * The buyer's request records, journaled to `<data-dir>/requests.sqlite` so that
 * `GET /_svc/requests/<id>` answers after a restart (docs/decisions/122-request-journal.md).
 * A record is written before the buyer signs the voucher for its request, so a voucher never
 * exists without its record. Retention is bounded by age and count.
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

/** Request records: a small memory cache over a durable journal (or memory only, for tests). */
export class RequestRecords {
  private readonly recent = new Map<string, RequestRecord>();
  private readonly db: DatabaseSync | undefined;
  private readonly putStmt: StatementSync | undefined;
  private readonly getStmt: StatementSync | undefined;
  private readonly retentionMs: number;
  private readonly maxRecords: number;
  private readonly clock: () => number;
  private sinceMs: number;
  private prunedAt = 0;

  /** `dataDir` undefined: memory only (the last 10,000 records, lost on restart). */
  constructor(dataDir?: string, options: RequestJournalOptions = {}) {
    this.clock = options.clock ?? Date.now;
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
   * Stores (or replaces) a record, with an open paid stream's `progress` (dropped by the next put
   * without one); durable when this returns.
   */
  put(record: RequestRecord, progress?: string): void {
    const at = record.at ?? this.clock();
    const stamped = { ...record, at };
    this.recent.delete(record.requestId);
    this.recent.set(record.requestId, stamped);
    // With a journal the cache only spares reads of recent records; memory only, it is the store.
    if (this.recent.size > (this.db ? 1_000 : 10_000)) {
      const oldest = this.recent.keys().next().value;
      if (oldest !== undefined) this.recent.delete(oldest);
    }
    if (!this.putStmt) return;
    this.putStmt.run(record.requestId, at, encodeRequestRecord(stamped), progress ?? null);
    if (at - this.prunedAt > PRUNE_EVERY_MS) this.prune();
  }

  get(requestId: string): RequestRecord | undefined {
    const cached = this.recent.get(requestId);
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
