/**
 * Probes, verdicts and the day's spend, kept in `<data-dir>/buyer/audits.sqlite` so verdicts
 * survive restarts (docs/decisions/164-...). Bounded: the last VERDICT_WINDOW probes of each
 * (seller, model) are kept, with their answers as compared and their receipts; a probe no window
 * holds any more is deleted, and so is a pair not audited for PAIR_RETENTION_MS. Spend is kept
 * per UTC day and identity: the buyer's own spend in memory (written with the next probe), the
 * audits' at once.
 */
import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { ensureDir } from '../config/index.js';
import type { MicroUsd } from '../money/index.js';
import { type ProbeRecord, type SellerAudit, VERDICT_WINDOW, verdictOf } from './verdict.js';

/** A pair with no probe for this long is forgotten. */
const PAIR_RETENTION_MS = 90 * 86_400_000;
/** Verdicts kept in memory (the rest are read back when asked for). */
const MAX_CACHED = 2_000;

const SCHEMA = `CREATE TABLE IF NOT EXISTS probes (
  id TEXT PRIMARY KEY, at INTEGER NOT NULL, model TEXT NOT NULL, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS participants (
  peer TEXT NOT NULL, model TEXT NOT NULL, at INTEGER NOT NULL, probe TEXT NOT NULL,
  PRIMARY KEY (peer, model, probe));
CREATE INDEX IF NOT EXISTS participants_at ON participants (peer, model, at);
CREATE TABLE IF NOT EXISTS spend (
  day TEXT NOT NULL, identity TEXT NOT NULL, own INTEGER NOT NULL, audit INTEGER NOT NULL,
  PRIMARY KEY (day, identity));`;

/** The UTC day of `ms`, `YYYY-MM-DD`. */
export const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const DAY_MS = 86_400_000;

const keyOf = (peerId: string, modelKey: string) => `${peerId}|${modelKey}`;

interface Spend {
  own: MicroUsd;
  audit: MicroUsd;
}

export class AuditStore {
  readonly path: string;
  private readonly db: DatabaseSync;
  private day: string;
  /** Where `day` starts (unix ms, UTC): today is compared as a time range, not formatted per call. */
  private dayFrom = 0;
  private spend = new Map<string, Spend>();
  private readonly verdicts = new Map<string, SellerAudit | undefined>();
  private readonly readOnly: boolean;
  /** Spend of earlier days in a window, per day, identity and window length. */
  private readonly pastSpend = new Map<string, { own: MicroUsd; audit: MicroUsd }>();

  constructor(
    dataDir: string | undefined,
    private readonly clock: () => number,
    warn: (message: string) => void = () => {},
    options: { readOnly?: boolean } = {},
  ) {
    this.path = dataDir ? join(dataDir, 'buyer', 'audits.sqlite') : ':memory:';
    this.readOnly = options.readOnly ?? false;
    if (this.readOnly) {
      // For commands reading what a running buyer writes (WAL lets them read at once).
      if (!existsSync(this.path)) throw new Error(`no audits in ${this.path}`);
      this.db = new DatabaseSync(this.path, { readOnly: true });
      this.day = dayOf(clock());
      return;
    }
    if (dataDir) {
      ensureDir(join(dataDir, 'buyer'));
      const older = join(dataDir, 'buyer', 'audits.json');
      if (existsSync(older)) {
        renameSync(older, `${older}.v1`);
        warn(`${older} holds audits of an older kind; moved aside, audits start afresh`);
      }
    }
    this.db = new DatabaseSync(this.path);
    this.db.exec('PRAGMA journal_mode = WAL');
    this.db.exec(SCHEMA);
    this.day = dayOf(clock());
    const rows = this.db
      .prepare('SELECT identity, own, audit FROM spend WHERE day = ?')
      .all(this.day) as { identity: string; own: number | bigint; audit: number | bigint }[];
    for (const row of rows) {
      this.spend.set(row.identity, { own: BigInt(row.own), audit: BigInt(row.audit) });
    }
  }

  private today(identity: string): Spend {
    const now = this.clock();
    if (now < this.dayFrom || now >= this.dayFrom + DAY_MS) {
      const day = dayOf(now);
      this.dayFrom = Date.parse(day);
      if (day !== this.day) {
        // The day's own spend is kept until now only in memory: written before the next day starts.
        if (!this.readOnly) this.writeSpend();
        this.day = day;
        this.spend = new Map();
      }
    }
    let spend = this.spend.get(identity);
    if (!spend) {
      spend = { own: 0n, audit: 0n };
      this.spend.set(identity, spend);
    }
    return spend;
  }

  /** Today's spend of `identity`: on audits, and on its own (non-audit) requests. */
  spentToday(identity: string): { own: MicroUsd; audit: MicroUsd } {
    const { own, audit } = this.today(identity);
    return { own, audit };
  }

  /**
   * Spend of `identity` over the last `days` UTC days, today included: the window audits'
   * allowance is counted over, so a buyer with little daily spend can still afford a probe now
   * and then. Past days are read once per day.
   */
  spentOver(identity: string, days: number): { own: MicroUsd; audit: MicroUsd } {
    const today = this.spentToday(identity);
    const key = `${this.day}|${identity}|${days}`;
    let past = this.pastSpend.get(key);
    if (!past) {
      const from = dayOf(Date.parse(this.day) - (days - 1) * 86_400_000);
      const row = this.db
        .prepare(
          'SELECT COALESCE(SUM(own), 0) AS own, COALESCE(SUM(audit), 0) AS audit FROM spend WHERE identity = ? AND day >= ? AND day < ?',
        )
        .get(identity, from, this.day) as { own: number | bigint; audit: number | bigint };
      past = { own: BigInt(row.own), audit: BigInt(row.audit) };
      if (this.pastSpend.size > 1_000) this.pastSpend.clear();
      this.pastSpend.set(key, past);
    }
    return { own: past.own + today.own, audit: past.audit + today.audit };
  }

  /** Adds to today's own spend of `identity` (kept in memory; written with the next probe). */
  addOwnSpend(identity: string, micro: MicroUsd): void {
    this.today(identity).own += micro;
  }

  /** Adds an audit request's cost to today's spend of `identity`, and writes the day's spend. */
  addAuditSpend(identity: string, micro: MicroUsd): void {
    this.today(identity).audit += micro;
    this.writeSpend();
  }

  private writeSpend(): void {
    const put = this.db.prepare(
      'INSERT INTO spend (day, identity, own, audit) VALUES (?, ?, ?, ?) ' +
        'ON CONFLICT (day, identity) DO UPDATE SET own = excluded.own, audit = excluded.audit',
    );
    for (const [identity, spend] of this.spend) put.run(this.day, identity, spend.own, spend.audit);
  }

  /** Records a probe for every seller that answered it, and keeps each one's window. */
  record(probe: ProbeRecord): void {
    const at = probe.at;
    this.db.exec('BEGIN');
    try {
      this.db
        .prepare('INSERT OR REPLACE INTO probes (id, at, model, record) VALUES (?, ?, ?, ?)')
        .run(probe.id, at, probe.modelKey, JSON.stringify(probe));
      const join = this.db.prepare(
        'INSERT OR REPLACE INTO participants (peer, model, at, probe) VALUES (?, ?, ?, ?)',
      );
      const trim = this.db.prepare(
        `DELETE FROM participants WHERE peer = ? AND model = ? AND probe NOT IN (
           SELECT probe FROM participants WHERE peer = ? AND model = ? ORDER BY at DESC LIMIT ?)`,
      );
      for (const answer of probe.answers) {
        join.run(answer.peerId, probe.modelKey, at, probe.id);
        trim.run(answer.peerId, probe.modelKey, answer.peerId, probe.modelKey, VERDICT_WINDOW);
        this.verdicts.delete(keyOf(answer.peerId, probe.modelKey));
      }
      this.db.prepare('DELETE FROM participants WHERE at < ?').run(at - PAIR_RETENTION_MS);
      this.db.exec('DELETE FROM probes WHERE id NOT IN (SELECT probe FROM participants)');
      this.writeSpend();
      this.db.exec('COMMIT');
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
  }

  /** The probes of `peerId` for `modelKey` in its window, oldest first. */
  probes(peerId: string, modelKey: string): ProbeRecord[] {
    const rows = this.db
      .prepare(
        `SELECT p.record FROM participants s JOIN probes p ON p.id = s.probe
         WHERE s.peer = ? AND s.model = ? ORDER BY s.at ASC`,
      )
      .all(peerId, modelKey) as { record: string }[];
    return rows.map((row) => JSON.parse(row.record) as ProbeRecord);
  }

  /** The pairs (seller, model) with probes, for `svc audit show` without a model. */
  pairs(peerId?: string): { peerId: string; modelKey: string }[] {
    const rows = (
      peerId === undefined
        ? this.db.prepare('SELECT DISTINCT peer, model FROM participants').all()
        : this.db
            .prepare('SELECT DISTINCT peer, model FROM participants WHERE peer = ?')
            .all(peerId)
    ) as { peer: string; model: string }[];
    return rows.map((row) => ({ peerId: row.peer, modelKey: row.model }));
  }

  /** The standing of a seller for a model; undefined before any probe. */
  audit(peerId: string, modelKey: string): SellerAudit | undefined {
    const key = keyOf(peerId, modelKey);
    if (this.verdicts.has(key)) return this.verdicts.get(key);
    const standing = verdictOf(peerId, this.probes(peerId, modelKey));
    if (this.verdicts.size >= MAX_CACHED) {
      const oldest = this.verdicts.keys().next().value;
      if (oldest !== undefined) this.verdicts.delete(oldest);
    }
    this.verdicts.set(key, standing);
    return standing;
  }

  /** Writes the day's spend and closes the database. */
  close(): void {
    if (!this.db.isOpen) return;
    if (!this.readOnly) this.writeSpend();
    this.db.close();
  }
}
