import { describe, expect, it } from 'vitest';
import { AuditStore } from './store.js';

describe('audit store: spend per UTC day', () => {
  it("counts a day's own spend until the next UTC midnight, then starts again at 0", () => {
    let now = Date.UTC(2026, 0, 1, 23, 59, 59, 999);
    const store = new AuditStore(undefined, () => now);
    store.addOwnSpend('team', 5n);
    now -= 86_399_999; // 00:00:00.000 the same day
    store.addOwnSpend('team', 2n);
    expect(store.spentToday('team')).toEqual({ own: 7n, audit: 0n });
    now = Date.UTC(2026, 0, 2);
    expect(store.spentToday('team')).toEqual({ own: 0n, audit: 0n });
    store.addOwnSpend('team', 1n);
    expect(store.spentOver('team', 2)).toEqual({ own: 8n, audit: 0n });
  });
});
