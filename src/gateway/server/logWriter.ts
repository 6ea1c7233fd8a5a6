/**
 * Writes request-log rows in small batches (one transaction per batch instead of one per
 * request). Rows wait at most `flushMs`; `close()` writes what is left. A failing store is
 * logged, never thrown at a client.
 */
import type { Logger } from '../../log/index.js';
import type { GatewayStore, LogRow } from '../store/types.js';

export class LogWriter {
  private queue: LogRow[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly store: GatewayStore;
  private readonly logger: Logger;
  private readonly flushMs: number;
  private readonly maxBatch: number;

  constructor(store: GatewayStore, logger: Logger, flushMs = 20, maxBatch = 200) {
    this.store = store;
    this.logger = logger;
    this.flushMs = flushMs;
    this.maxBatch = maxBatch;
  }

  /** Queues a row. */
  write(row: LogRow): void {
    this.queue.push(row);
    if (this.queue.length >= this.maxBatch) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
  }

  /** Writes every queued row. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const rows = this.queue;
    this.queue = [];
    if (rows.length === 0) return this.flushing;
    this.flushing = this.flushing.then(async () => {
      try {
        await this.store.insertLogs(rows);
      } catch (error) {
        this.logger.warn({ err: error, rows: rows.length }, 'request log rows not written');
      }
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    await this.flush();
  }
}
