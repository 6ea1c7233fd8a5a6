/**
 * Settlements and reservations that share a transaction (decisions 156 and 159): each waits at
 * most until the next turn of the event loop (a reservation after a quiet spell not at all,
 * decision 212), then one transaction applies every waiting
 * settlement, then every waiting reservation in the order they came, each checked against the
 * counters as the ones before it left them, so a batch admits exactly what the same reservations
 * one transaction each would. A reservation stays held (counted against every budget) until its
 * settlement commits, so waiting never lets spend pass a limit; a request that follows on this
 * gateway has the pending settlements applied before its reservation checks the room, so a
 * sequential client near its limit sees what its last request released. A process killed with
 * settlements pending leaves their reservations held, as a kill between answer and settlement
 * always did: recovery settles them from the buyer's journal. A reservation answers only once its
 * transaction committed, so nothing is forwarded on a reservation that was never written.
 *
 * SQLite only: its transactions hold the database write lock, so several settlements in one
 * cannot deadlock. PostgreSQL locks counter rows one by one, and two batches touching shared
 * workspace rows in different orders could.
 */
import type { ReserveResult, SettleInput } from '../types.js';
import { applyCounterDeltas, type CounterDeltas, settle, settleIn } from './budgets.js';
import type { SqlDb, SqlExecutor } from './SqlDb.js';

interface Pending<T> {
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

interface PendingSettle extends Pending<void> {
  input: SettleInput;
}

interface PendingReserve extends Pending<ReserveResult> {
  run: (tx: SqlExecutor) => Promise<ReserveResult>;
}

/**
 * A reservation that comes this long after the one before it commits at once: sequential
 * traffic gains the event loop's turn; concurrent traffic, whose reservations come closer
 * together, still shares transactions.
 */
const QUIET_MS = 5;

export class SettleQueue {
  private settles: PendingSettle[] = [];
  private reserves: PendingReserve[] = [];
  private scheduled = false;
  private lastReserveMs = Number.NEGATIVE_INFINITY;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly db: SqlDb) {}

  /** Queues a settlement (with its ledger row); resolves once it is committed. */
  settle(input: SettleInput): Promise<void> {
    return new Promise((resolve, reject) => {
      this.settles.push({ input, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Queues a reservation, `run` inside the next shared transaction after the settlements waiting
   * then; resolves with its result once that transaction committed.
   */
  reserve(run: (tx: SqlExecutor) => Promise<ReserveResult>): Promise<ReserveResult> {
    return new Promise((resolve, reject) => {
      this.reserves.push({ run, resolve, reject });
      const now = performance.now();
      const quiet = now - this.lastReserveMs > QUIET_MS;
      this.lastReserveMs = now;
      // After a quiet spell no other reservation is likely to join this turn's batch: commit now
      // rather than after a turn of the event loop (docs/decisions/212-gateway-time-before-
      // forwarding.md). Under load reservations come closer together and keep sharing batches.
      if (quiet) void this.flush();
      else this.schedule();
    });
  }

  /** Commits everything pending now (before reads of spend, and on close). */
  flush(): Promise<void> {
    const settles = this.settles;
    const reserves = this.reserves;
    this.settles = [];
    this.reserves = [];
    if (settles.length > 0 || reserves.length > 0) {
      this.flushing = this.flushing.then(() => this.commit(settles, reserves));
    }
    return this.flushing;
  }

  /**
   * One transaction for the batch. Any failure in it (a statement, BEGIN or COMMIT) rolls all of
   * it back, and then every item runs in a transaction of its own, so that a failing one fails
   * alone; no savepoint is paid for in the usual case.
   */
  private async commit(settles: PendingSettle[], reserves: PendingReserve[]): Promise<void> {
    const results: ReserveResult[] = [];
    try {
      await this.db.transaction(async (tx) => {
        // Counter rows shared by several settlements are updated once, with the sums, before any
        // reservation reads them.
        const deltas: CounterDeltas = new Map();
        for (const item of settles) await settleIn(tx, item.input, true, deltas);
        await applyCounterDeltas(tx, deltas);
        for (const item of reserves) results.push(await item.run(tx));
      });
    } catch {
      await this.settleOneByOne(settles);
      await this.reserveOneByOne(reserves);
      return;
    }
    for (const item of settles) item.resolve();
    for (const [index, item] of reserves.entries()) item.resolve(results[index] as ReserveResult);
  }

  private async reserveOneByOne(items: PendingReserve[]): Promise<void> {
    for (const item of items) {
      try {
        item.resolve(await this.db.transaction((tx) => item.run(tx)));
      } catch (error) {
        item.reject(error);
      }
    }
  }

  /** So that one failing settlement leaves only its own reservation held. */
  private async settleOneByOne(items: PendingSettle[]): Promise<void> {
    for (const item of items) {
      try {
        await settle(this.db, item.input, true);
        item.resolve();
      } catch (error) {
        item.reject(error);
      }
    }
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }
}
