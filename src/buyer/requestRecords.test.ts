import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { type RequestRecord, RequestRecords, SOON_MS } from './requestRecords.js';

const DAY = 86_400_000;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function record(requestId: string, extra: Partial<RequestRecord> = {}): RequestRecord {
  return {
    requestId,
    status: 200,
    completed: true,
    streamed: false,
    peerId: null,
    provider: null,
    serviceId: null,
    model: null,
    usage: { inputTokens: 1, cachedInputTokens: 0, outputTokens: 2 },
    costUsd: '0.000003',
    latencyMs: 1,
    attempts: [],
    ...extra,
  };
}

describe('the request journal', () => {
  it('answers after a restart, keeps its start, and prunes past retention', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-journal-'));
    dirs.push(dir);
    const clock = { now: 1_000 * DAY };
    const first = new RequestRecords(dir, { clock: () => clock.now, retentionMs: 7 * DAY });
    first.put(record('old'));
    clock.now += DAY;
    first.put(record('open', { completed: false, costUsd: '0.000000' }));
    expect(first.journalSinceMs).toBe(1_000 * DAY);
    first.close();

    clock.now += 3 * DAY;
    const second = new RequestRecords(dir, { clock: () => clock.now, retentionMs: 7 * DAY });
    expect(second.get('old')).toMatchObject({ costUsd: '0.000003', at: 1_000 * DAY });
    expect(second.open().map((r) => r.requestId)).toEqual(['open']);
    expect(second.journalSinceMs).toBe(1_000 * DAY);
    expect(second.closeOpen()).toBe(1);
    expect(second.get('open')).toMatchObject({ costUsd: '0.000000', errorCode: 'buyer_restarted' });
    expect(second.open()).toEqual([]);
    second.close();

    clock.now += 4 * DAY;
    const third = new RequestRecords(dir, { clock: () => clock.now, retentionMs: 7 * DAY });
    expect(third.get('old')).toBeUndefined();
    expect(third.get('open')).toBeDefined();
    expect(third.journalSinceMs).toBe(clock.now - 7 * DAY);
    third.close();
  });

  it('keeps at most maxRecords', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-journal-'));
    dirs.push(dir);
    let now = 5_000;
    const journal = new RequestRecords(dir, { clock: () => now, maxRecords: 2 });
    for (const id of ['a', 'b', 'c']) {
      journal.put(record(id));
      now += 1;
    }
    journal.close();
    now += 120_000;
    const reopened = new RequestRecords(dir, { clock: () => now, maxRecords: 2 });
    expect(reopened.get('a')).toBeUndefined();
    expect(reopened.get('c')).toBeDefined();
    expect(reopened.journalSinceMs).toBe(5_001);
    reopened.close();
  });

  it('opens a journal written before streams journaled their progress', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-journal-'));
    dirs.push(dir);
    const old = new DatabaseSync(join(dir, 'requests.sqlite'));
    old.exec(`CREATE TABLE requests (id TEXT PRIMARY KEY, at INTEGER NOT NULL, record TEXT NOT NULL);
      CREATE TABLE journal_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);`);
    const open = record('open', { completed: false, costUsd: '0.000000', at: 5 });
    old
      .prepare('INSERT INTO requests (id, at, record) VALUES (?, ?, ?)')
      .run('open', 5, JSON.stringify(open));
    old.close();
    const journal = new RequestRecords(dir);
    expect(journal.openWithProgress()).toEqual([{ record: open, progress: undefined }]);
    journal.put(record('next', { completed: false }), '{"some":"progress"}');
    expect(journal.openWithProgress().find((o) => o.record.requestId === 'next')?.progress).toBe(
      '{"some":"progress"}',
    );
    journal.close();
  });

  describe('records written soon (no voucher depends on them)', () => {
    /** What a crash would leave: the journal's rows as another connection reads them. */
    function durable(dir: string): Map<string, { record: RequestRecord; progress: unknown }> {
      const db = new DatabaseSync(join(dir, 'requests.sqlite'));
      try {
        const rows = db.prepare('SELECT id, record, progress FROM requests').all();
        return new Map(
          rows.map((row) => [
            String(row.id),
            { record: JSON.parse(String(row.record)) as RequestRecord, progress: row.progress },
          ]),
        );
      } finally {
        db.close();
      }
    }
    function journalDir(): string {
      const dir = mkdtempSync(join(tmpdir(), 'svc-journal-'));
      dirs.push(dir);
      return dir;
    }

    it('are answered at once and journaled together shortly after', async () => {
      const dir = journalDir();
      const journal = new RequestRecords(dir);
      journal.putSoon(record('a'));
      journal.putSoon(record('b', { costUsd: '0.000000' }));
      expect(journal.get('b')).toMatchObject({ requestId: 'b', costUsd: '0.000000' });
      expect(durable(dir).size).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, SOON_MS * 3));
      expect([...durable(dir).keys()].sort()).toEqual(['a', 'b']);
      journal.close();
    });

    it('are journaled by a durable put, which an older version never overwrites', async () => {
      const dir = journalDir();
      const journal = new RequestRecords(dir);
      journal.putSoon(record('free'));
      journal.putSoon(record('paid', { completed: false, costUsd: '0.000000' }));
      journal.put(record('paid', { costUsd: '0.000005' }));
      const rows = durable(dir);
      expect(rows.get('free')?.record.completed).toBe(true);
      expect(rows.get('paid')?.record).toMatchObject({ completed: true, costUsd: '0.000005' });
      await new Promise((resolve) => setTimeout(resolve, SOON_MS * 3));
      expect(durable(dir).get('paid')?.record.costUsd).toBe('0.000005');
      journal.close();
    });

    it("replace a row with a paid stream's progress at once: a crash cannot leave it open", () => {
      const dir = journalDir();
      const journal = new RequestRecords(dir);
      journal.put(record('stream', { completed: false, costUsd: '0.000000' }), '{"p":1}');
      journal.putSoon(record('stream', { costUsd: '0.000000', errorCode: 'seller_error' }));
      const row = durable(dir).get('stream');
      expect(row?.record.errorCode).toBe('seller_error');
      expect(row?.progress).toBeNull();
      // A restart on this journal (without closing the first: a crash) finds nothing open.
      const restarted = new RequestRecords(dir);
      expect(restarted.openWithProgress()).toEqual([]);
      restarted.close();
      journal.close();
    });

    it('survive a failed batch: reported, kept waiting, written with the next write', async () => {
      const dir = journalDir();
      const errors: unknown[] = [];
      const journal = new RequestRecords(dir, { onFlushError: (error) => errors.push(error) });
      const other = new DatabaseSync(join(dir, 'requests.sqlite'));
      other.exec('ALTER TABLE requests RENAME TO requests_away');
      journal.putSoon(record('kept'));
      await new Promise((resolve) => setTimeout(resolve, SOON_MS * 3));
      expect(errors).toHaveLength(1);
      expect(journal.get('kept')?.requestId).toBe('kept');
      other.exec('ALTER TABLE requests_away RENAME TO requests');
      other.close();
      journal.close();
      expect(durable(dir).get('kept')?.record.requestId).toBe('kept');
    });

    it('are journaled when the journal closes', () => {
      const dir = journalDir();
      const journal = new RequestRecords(dir);
      journal.putSoon(record('late'));
      journal.close();
      expect(durable(dir).get('late')?.record.requestId).toBe('late');
    });
  });
});
