import { describe, expect, it } from 'vitest';
import { newLogId, newLogRow } from './requestLog.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('request log ids', () => {
  it('are version 7 UUIDs carrying the row time, ordered by it, and unique', () => {
    const at = Date.UTC(2026, 2, 18, 12, 0, 0, 123);
    const id = newLogId(at);
    expect(id).toMatch(UUID_V7);
    expect(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at);
    const ids = Array.from({ length: 1000 }, (_, index) => newLogId(at + index));
    expect([...ids].sort()).toEqual(ids);
    const same = new Set(Array.from({ length: 1000 }, () => newLogId(at)));
    expect(same.size).toBe(1000);
    expect(newLogRow({ at, method: 'GET', route: '/v1/models', clientAddress: null }).id).toMatch(
      UUID_V7,
    );
  });
});
