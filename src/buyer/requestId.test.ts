import { describe, expect, it } from 'vitest';
import { newRequestId, requestIdAge } from '../protocol/index.js';

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

  it('say how long before a time they were made, by the time they hold', () => {
    const at = Date.UTC(2026, 10, 27, 21, 0, 0);
    expect(requestIdAge(newRequestId(at - 7), at + 0.9)).toBe(7);
    expect(requestIdAge(newRequestId(at + 2), at)).toBe(-2);
    expect(requestIdAge(newRequestId(at - 86_400_001), at)).toBeUndefined();
    expect(requestIdAge('req_0199a3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d', at)).toBeUndefined();
  });
});
