/**
 * Settlements that share a transaction (decision 156): a settlement waits at most until the next
 * turn of the event loop, or less when a reservation's transaction starts first and applies it;
 * under load one commit carries many. The reservation stays held (counted against every budget)
 * until its settlement commits, so waiting never lets spend pass a limit; a request that follows
 * on this gateway applies the pending settlements in its own reservation's transaction before it
 * checks the room, so a sequential client near its limit sees what its last request released. A
 * process killed with settlements pending leaves their reservations held, as a kill between
 * answer and settlement always did: recovery settles them from the buyer's journal.
 *
 * SQLite only: its transactions hold the database write lock, so several settlements in one
 * cannot deadlock. PostgreSQL locks counter rows one by one, and two batches touching shared
 * workspace rows in different orders could.
 */
import type { SettleInput } from '../types.js';
import { settle, settleIn } from './budgets.js';
import type { SqlDb, SqlExecutor } from './SqlDb.js';

interface Pending {
  input: SettleInput;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class SettleQueue {
  private pending: Pending[] = [];
  private scheduled = false;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly db: SqlDb) {}

  /** Queues a settlement (with its ledger row); resolves once it is committed. */
  settle(input: SettleInput): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Runs `body` in a transaction that first applies every pending settlement; they are committed
   * with it, or queued again when it fails.
   */
  async withPending<T>(
    body: (first: (tx: SqlExecutor) => Promise<void>) => Promise<T>,
  ): Promise<T> {
    let taken: Pending[] = [];
    try {
      const result = await body(async (tx) => {
        taken = this.take();
        if (taken.length === 0) return;
        // A settlement that fails must not fail the reservation: it is undone and retried alone.
        await tx.run('SAVEPOINT pending_settlements');
        try {
          for (const item of taken) await settleIn(tx, item.input, true);
        } catch {
          await tx.run('ROLLBACK TO pending_settlements');
          this.pending = [...taken, ...this.pending];
          this.schedule();
          taken = [];
        }
        await tx.run('RELEASE pending_settlements');
      });
      for (const item of taken) item.resolve();
      return result;
    } catch (error) {
      this.pending = [...taken, ...this.pending];
      if (this.pending.length > 0) this.schedule();
      throw error;
    }
  }

  /** Commits every pending settlement now (before reads of spend, and on close). */
  flush(): Promise<void> {
    const batch = this.take();
    if (batch.length > 0) {
      this.flushing = this.flushing.then(async () => {
        try {
          await this.db.transaction(async (tx) => {
            for (const item of batch) await settleIn(tx, item.input, true);
          });
          for (const item of batch) item.resolve();
        } catch {
          // One at a time, so that one failing settlement leaves only its reservation held.
          for (const item of batch) {
            try {
              await settle(this.db, item.input, true);
              item.resolve();
            } catch (error) {
              item.reject(error);
            }
          }
        }
      });
    }
    return this.flushing;
  }

  private take(): Pending[] {
    const batch = this.pending;
    this.pending = [];
    return batch;
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
