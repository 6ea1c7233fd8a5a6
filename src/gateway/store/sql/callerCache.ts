/**
 * What the request path reads about a key — its caller (key, member, workspace) at
 * authentication and its budget scopes with their limits at reservation — kept in memory while
 * no row of those tables can have changed (SQLite's `changeEpoch`: another connection's commit or
 * this connection's own write empties it), so a revoke, rotate, limit or policy change from any
 * process still applies to the very next request
 * (docs/decisions/159-gateway-auth-and-sizing-without-counting.md).
 */
import type { CallerRecord } from '../types.js';
import type { Scope } from './reserveCounters.js';
import type { SqlDb } from './SqlDb.js';

/** The tables a caller and its scopes are read from. */
const TABLES = ['api_keys', 'members', 'workspaces'] as const;
/** Entries per map; a full map is emptied (keys in use come back on their next request). */
const MAX_ENTRIES = 4_096;

export class CallerCache {
  private readonly epochOf: (tables: readonly string[]) => number;
  private epoch = -1;
  private readonly callers = new Map<string, CallerRecord>();
  private readonly scopes = new Map<string, Scope[]>();

  /** Null for a database that cannot tell when rows change (PostgreSQL): nothing is cached. */
  static of(db: SqlDb): CallerCache | null {
    return db.changeEpoch ? new CallerCache(db.changeEpoch.bind(db)) : null;
  }

  private constructor(epochOf: (tables: readonly string[]) => number) {
    this.epochOf = epochOf;
  }

  /** The current epoch; what was cached under an older one is dropped. */
  private current(): number {
    const epoch = this.epochOf(TABLES);
    if (epoch !== this.epoch) {
      this.callers.clear();
      this.scopes.clear();
      this.epoch = epoch;
    }
    return epoch;
  }

  /** The caller of `secretHash`, cached or read by `read` (unknown hashes are never cached). */
  async caller(
    secretHash: string,
    read: () => Promise<CallerRecord | null>,
  ): Promise<CallerRecord | null> {
    return this.through(this.callers, secretHash, read);
  }

  /** A key's scopes, cached or read by `read` (inside the reservation's transaction). */
  async scopesOf(keyId: string, read: () => Promise<Scope[] | null>): Promise<Scope[] | null> {
    return this.through(this.scopes, keyId, read);
  }

  private async through<T>(
    map: Map<string, T>,
    id: string,
    read: () => Promise<T | null>,
  ): Promise<T | null> {
    const epoch = this.current();
    const hit = map.get(id);
    if (hit !== undefined) return hit;
    const found = await read();
    // Kept only when nothing changed while it was read.
    if (found !== null && this.current() === epoch) {
      if (map.size >= MAX_ENTRIES) map.clear();
      map.set(id, found);
    }
    return found;
  }
}
