import { describe, expect, it } from 'vitest';
import { newRequestId } from '../protocol/index.js';

describe('buyer request ids', () => {
  it('are req_ and 24 hex digits, unique, and sort in the order they were made', () => {
    const start = Date.UTC(2026, 10, 25, 4, 0, 0);
    const ids = Array.from({ length: 600 }, (_, i) => newRequestId(start + Math.floor(i / 3)));
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Ids of different milliseconds sort by time (the journal's key index grows at its end).
    const firstOfEach = ids.filter((_, i) => i % 3 === 0);
    expect([...firstOfEach].sort()).toEqual(firstOfEach);
    expect(ids[0]!.slice(4, 16)).toBe(start.toString(16).padStart(12, '0'));
  });
});
