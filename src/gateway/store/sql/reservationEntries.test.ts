import { describe, expect, it } from 'vitest';
import { decodeEntries, encodeEntries, entriesOf } from './reservationEntries.js';

const scopes = [
  { scope: 'key' as const, scopeId: 'key_01J9ZQ4T8W2X' },
  { scope: 'member' as const, scopeId: 'mem_alice' },
  { scope: 'workspace' as const, scopeId: 'ws_default' },
];
const starts = [1_764_028_800_000, 1_763_942_400_000, 1_761_955_200_000, 0];

describe('reservation entries as stored', () => {
  it('reads the compact form back as every (scope, period) entry', () => {
    const stored = encodeEntries(scopes, starts);
    expect(stored.length).toBeLessThan(200);
    expect(decodeEntries(stored)).toEqual(entriesOf(scopes, starts));
    expect(decodeEntries(stored)).toContainEqual({
      scope: 'member',
      scopeId: 'mem_alice',
      period: 'monthly',
      periodStart: 1_761_955_200_000,
    });
    expect(decodeEntries(stored)).toHaveLength(12);
  });

  it('reads rows written before the compact form (the full list)', () => {
    const full = entriesOf(scopes.slice(0, 1), starts);
    expect(decodeEntries(JSON.stringify(full))).toEqual(full);
  });
});
