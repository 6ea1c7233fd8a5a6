import { describe, expect, it } from 'vitest';
import { periodStart } from '../../budget/periods.js';
import { PERIODS } from '../types.js';
import { reservationRows, storedEntries, tuples } from './counterTargets.js';
import { decodeEntries } from './reservationEntries.js';

const scopes = [
  { scope: 'key' as const, scopeId: 'key_1' },
  { scope: 'workspace' as const, scopeId: 'ws_1' },
];

describe('counter targets', () => {
  it('are the periods of the day of `now`, rebuilt when the UTC day changes', () => {
    // Sunday 2026-03-01 23:59:59.999 UTC, then the Monday that starts a new week (and month).
    const sunday = Date.UTC(2026, 2, 1, 23, 59, 59, 999);
    const first = reservationRows(scopes, sunday);
    expect(reservationRows(scopes, sunday - 3_600_000)).toBe(first);
    expect(first.starts).toEqual(PERIODS.map((period) => periodStart(period, sunday)));
    const monday = sunday + 1;
    const next = reservationRows(scopes, monday);
    expect(next.starts).toEqual(PERIODS.map((period) => periodStart(period, monday)));
    expect(next.starts).not.toEqual(first.starts);
    expect(decodeEntries(next.encoded)).toEqual(next.entries);
    expect(next.entries).toHaveLength(8);
  });

  it('give the same values and text for the same rows, numbered from `first`', () => {
    const { entries, encoded } = reservationRows(scopes, Date.UTC(2026, 5, 10));
    const at2 = tuples(entries, 2);
    expect(tuples(entries, 2)).toBe(at2);
    expect(at2.params).toHaveLength(32);
    expect(at2.sql.startsWith('($2, $3, $4, CAST($5 AS BIGINT)), ($6,')).toBe(true);
    expect(tuples(entries, 3).sql.startsWith('($3, $4, $5, CAST($6 AS BIGINT))')).toBe(true);
    expect(storedEntries(encoded)).toEqual(entries);
    expect(storedEntries(encoded)).toBe(storedEntries(encoded));
  });
});
