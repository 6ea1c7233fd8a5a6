/**
 * The counter rows a reservation or a settlement writes, and the statement text naming them,
 * built once and reused: a key's scopes come from the caller cache as the same array for as long
 * as no row they were read from changed, and the periods' starts change once a day. Rebuilding
 * them (period starts, entries, placeholders, the stored entries, each statement's text) was
 * ~1 % of an embedded gateway's CPU per request
 * (docs/decisions/201-buyer-and-gateway-cpu-per-request.md). Only the JavaScript values are kept:
 * every statement still runs against the rows as they are.
 */
import { periodStart } from '../../budget/periods.js';
import { type BudgetLevel, PERIODS } from '../types.js';
import { decodeEntries, type Entry, encodeEntries, entriesOf } from './reservationEntries.js';
import type { SqlParam } from './SqlDb.js';

const DAY_MS = 86_400_000;

/** `(scope, scope_id, period, period_start)` tuples as placeholders from `$first`, and their values. */
export interface Tuples {
  sql: string;
  params: SqlParam[];
}

const tupleSql = new Map<string, string>();
const tuplesOfEntries = new WeakMap<Entry[], Map<number, Tuples>>();

/**
 * The tuples of `entries` from `$first`. The text only depends on the count, so it is built once
 * (and the driver's statement cache hits at once); the values once per entries array.
 */
export function tuples(entries: Entry[], first: number): Tuples {
  let byFirst = tuplesOfEntries.get(entries);
  const known = byFirst?.get(first);
  if (known) return known;
  const params: SqlParam[] = [];
  for (const entry of entries) {
    params.push(entry.scope, entry.scopeId, entry.period, entry.periodStart);
  }
  const shape = `${entries.length}/${first}`;
  let sql = tupleSql.get(shape);
  if (sql === undefined) {
    sql = entries
      .map((_, index) => {
        const at = first + index * 4;
        return `($${at}, $${at + 1}, $${at + 2}, CAST($${at + 3} AS BIGINT))`;
      })
      .join(', ');
    tupleSql.set(shape, sql);
  }
  const made = { sql, params };
  if (!byFirst) {
    byFirst = new Map();
    tuplesOfEntries.set(entries, byFirst);
  }
  byFirst.set(first, made);
  return made;
}

/** A reservation's counter rows on one day: the periods' starts, the entries, what is stored. */
export interface ReservationRows {
  /** UTC day (days since the epoch) the starts are of. */
  day: number;
  starts: number[];
  entries: Entry[];
  /** `reservations.entries` (src/gateway/store/sql/reservationEntries.ts). */
  encoded: string;
}

const rowsOfScopes = new WeakMap<
  ReadonlyArray<{ scope: BudgetLevel; scopeId: string }>,
  ReservationRows
>();

/** The counter rows of `scopes` in the periods containing `now` (every start is a function of the UTC day). */
export function reservationRows(
  scopes: ReadonlyArray<{ scope: BudgetLevel; scopeId: string }>,
  now: number,
): ReservationRows {
  const day = Math.floor(now / DAY_MS);
  const known = rowsOfScopes.get(scopes);
  if (known?.day === day) return known;
  const starts = PERIODS.map((period) => periodStart(period, now));
  const rows = {
    day,
    starts,
    entries: entriesOf(scopes, starts),
    encoded: encodeEntries(scopes, starts),
  };
  rowsOfScopes.set(scopes, rows);
  return rows;
}

/** Stored entries decoded lately: settlements of one key's requests store the same text. */
const decoded = new Map<string, Entry[]>();
const DECODED_MAX = 1_024;

/** The entries of a stored `reservations.entries` (the same array for the same text). */
export function storedEntries(stored: string): Entry[] {
  const known = decoded.get(stored);
  if (known) return known;
  const entries = decodeEntries(stored);
  if (decoded.size >= DECODED_MAX) decoded.clear();
  decoded.set(stored, entries);
  return entries;
}

/** Statement texts around one set of tuples, per maker, by the tuples' text (a shared string). */
const texts = new Map<(values: string) => string, Map<string, string>>();

/**
 * `make(values)`, remembered per `make` (a module-level function: nothing is allocated per call)
 * and `values` (a handful of texts in all).
 */
export function statementText(make: (values: string) => string, values: string): string {
  let ofMaker = texts.get(make);
  if (!ofMaker) {
    ofMaker = new Map();
    texts.set(make, ofMaker);
  }
  let text = ofMaker.get(values);
  if (text === undefined) {
    text = make(values);
    ofMaker.set(values, text);
  }
  return text;
}
