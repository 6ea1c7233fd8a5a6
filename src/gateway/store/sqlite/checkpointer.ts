/**
 * Background WAL checkpoints for the gateway's SQLite file (decision 099). A checkpoint copies
 * the WAL back into the database and fsyncs both files: milliseconds that, run by SQLite's
 * auto-checkpoint inside a request's COMMIT, land on that request (and on every request queued
 * behind it on the event loop). Here a worker thread with its own connection runs a PASSIVE
 * checkpoint every `intervalMs`; PASSIVE never blocks the writer, so requests keep committing
 * meanwhile. It also bounds how much committed work only lives in the unsynced WAL.
 */
import { Worker } from 'node:worker_threads';

/** The worker (plain CommonJS, evaluated as-is: no loader or build step involved). */
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path, { timeout: 0 });
db.exec('PRAGMA synchronous = NORMAL');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const timer = setInterval(() => {
  try {
    checkpoint.get();
  } catch {
    // Busy (another process checkpoints) or the file is gone: the next tick tries again.
  }
}, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  /** Stops the worker (the last connection to close checkpoints the rest itself). */
  stop(): Promise<void>;
}

/** Starts checkpointing `path` every `intervalMs` in a worker thread (which never holds the process open). */
export function startCheckpointer(path: string, intervalMs: number): Checkpointer {
  const worker = new Worker(SOURCE, { eval: true, workerData: { path, intervalMs } });
  worker.unref();
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    worker.once('exit', () => {
      exited = true;
      resolve();
    });
    // A failing checkpointer only costs latency: SQLite's own auto-checkpoint still bounds the WAL.
    worker.once('error', () => undefined);
  });
  return {
    async stop() {
      if (exited) return;
      worker.postMessage('stop');
      const timer = setTimeout(() => void worker.terminate(), 5000);
      await exit;
      clearTimeout(timer);
    },
  };
}
