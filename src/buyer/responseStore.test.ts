import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDir, tempDir } from '../testing/index.js';
import { ResponseStore, type StoredResponse } from './responseStore.js';

const DAY = 86_400_000;
let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) removeTempDir(dir);
  dirs = [];
});

function response(id: string, at: number, text = 'x'): StoredResponse {
  return {
    id,
    previousId: undefined,
    input: [{ role: 'user', content: text }],
    output: [{ type: 'message', id: `msg_${id}`, role: 'assistant', content: [] }],
    peerId: 'peer',
    serviceId: 'svc',
    held: false,
    at,
  };
}

function open(options: { maxBytes?: number; maxAgeDays?: number; now?: { t: number } } = {}) {
  const dir = tempDir('svc-responses-');
  dirs.push(dir);
  const now = options.now ?? { t: 1_000 * DAY };
  const make = () =>
    new ResponseStore(dir, {
      maxBytes: options.maxBytes ?? 1 << 20,
      maxAgeMs: (options.maxAgeDays ?? 30) * DAY,
      clock: () => now.t,
    });
  return { dir, now, make };
}

describe('ResponseStore', () => {
  it('finds a kept response and its items at once, and after a restart', () => {
    const { dir, now, make } = open();
    const store = make();
    store.keep('default', response('resp_1', now.t));
    expect(store.get('default', 'resp_1')?.input).toEqual([{ role: 'user', content: 'x' }]);
    expect(store.ownerOfItem('default', 'msg_resp_1')).toBe('resp_1');
    store.close();
    expect(existsSync(join(dir, 'buyer', 'responses.sqlite'))).toBe(true);
    const reopened = make();
    expect(reopened.get('default', 'resp_1')).toMatchObject({
      id: 'resp_1',
      peerId: 'peer',
      serviceId: 'svc',
      held: false,
    });
    expect(reopened.ownerOfItem('default', 'msg_resp_1')).toBe('resp_1');
    reopened.close();
  });

  it('keeps each identity apart', () => {
    const { now, make } = open();
    const store = make();
    store.keep('team-a', response('resp_a', now.t));
    store.flush();
    expect(store.get('team-a', 'resp_a')).toBeDefined();
    expect(store.get('default', 'resp_a')).toBeUndefined();
    expect(store.ownerOfItem('default', 'msg_resp_a')).toBeUndefined();
    store.close();
  });

  it('forgets responses past their age', () => {
    const { now, make } = open({ maxAgeDays: 2 });
    const store = make();
    store.keep('default', response('resp_old', now.t));
    store.flush();
    now.t += 3 * DAY;
    expect(store.get('default', 'resp_old')).toBeUndefined();
    store.close();
    const reopened = make();
    expect(reopened.ownerOfItem('default', 'msg_resp_old')).toBeUndefined();
    reopened.close();
  });

  it('keeps at most maxBytes per identity, removing the oldest first', () => {
    const { now, make } = open({ maxBytes: 4_000 });
    const store = make();
    const big = 'y'.repeat(900);
    for (let i = 0; i < 10; i++) {
      now.t += 1_000;
      store.keep('default', response(`resp_${i}`, now.t, big));
      store.keep('other', response(`resp_${i}`, now.t, 'small'));
      store.flush();
    }
    store.close();
    const reopened = make();
    const kept = Array.from({ length: 10 }, (_, i) => `resp_${i}`).filter(
      (id) => reopened.get('default', id) !== undefined,
    );
    // The newest that fit in 4,000 bytes, the rest gone; the other identity keeps all of its own.
    expect(kept).toEqual(['resp_7', 'resp_8', 'resp_9']);
    expect(reopened.ownerOfItem('default', 'msg_resp_0')).toBeUndefined();
    expect(reopened.get('other', 'resp_0')).toBeDefined();
    reopened.close();
  });

  it('keeps nothing with maxBytes 0', () => {
    const { dir, now, make } = open({ maxBytes: 0 });
    const store = make();
    expect(store.enabled).toBe(false);
    store.keep('default', response('resp_1', now.t));
    expect(store.get('default', 'resp_1')).toBeUndefined();
    store.close();
    expect(existsSync(join(dir, 'buyer', 'responses.sqlite'))).toBe(false);
  });
});
