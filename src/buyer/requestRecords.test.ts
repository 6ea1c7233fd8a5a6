import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { type RequestRecord, RequestRecords } from './requestRecords.js';

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
});
