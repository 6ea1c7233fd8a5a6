/**
 * Hot reload without a `stat` per request (docs/decisions/157-buyer-cpu-per-request.md): a watch
 * on the file (or, while it does not exist, on its directory) says when it may have changed, and
 * only then is it stat'ed again. Without a watch (its directory missing, watching refused) every
 * call stats, as before; with one, a stat at least every RECHECK_MS still covers a missed event.
 */
import { type FSWatcher, statSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import { ensureDir } from '../files/index.js';

/** A watched file is stat'ed at least this often anyway. */
export const RECHECK_MS = 1_000;

export class FileChanges {
  private watcher: FSWatcher | undefined;
  /** What the watch is on: the file's inode, or its directory (-1) while the file is missing. */
  private watchedIno: number | undefined;
  private changed = true;
  private checkedAt = 0;
  private retryWatchAt = 0;
  private lastMtimeMs: number | undefined;
  private readonly name: string;

  /**
   * `createDir`: create the file's directory when missing, so that it can be watched (an empty
   * directory of the data dir that the file's writer would create anyway).
   */
  constructor(
    readonly path: string,
    private readonly createDir = false,
  ) {
    this.name = basename(path);
  }

  /** The file's mtime, undefined while it does not exist; stat'ed only when it may have changed. */
  mtimeMs(): number | undefined {
    const now = Date.now();
    if (this.watcher && !this.changed && now - this.checkedAt < RECHECK_MS) return this.lastMtimeMs;
    // Cleared before the stat: an event from here on marks the file again.
    this.changed = false;
    this.checkedAt = now;
    const stats = statSync(this.path, { throwIfNoEntry: false });
    this.lastMtimeMs = stats?.mtimeMs;
    this.watchFor(stats ? Number(stats.ino) : -1, now);
    return this.lastMtimeMs;
  }

  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
    this.watchedIno = undefined;
  }

  /** Watches the file's current inode (or the directory for its creation). */
  private watchFor(ino: number, now: number): void {
    if (this.watcher && this.watchedIno === ino) return;
    this.close();
    if (now < this.retryWatchAt) return;
    try {
      const onFile = ino !== -1;
      if (!onFile && this.createDir) ensureDir(dirname(this.path));
      this.watcher = watch(
        onFile ? this.path : dirname(this.path),
        { persistent: false },
        (_, f) => {
          if (onFile || f === null || f === this.name) this.changed = true;
        },
      );
      this.watcher.on('error', () => {
        this.close();
        this.changed = true;
      });
      this.watchedIno = ino;
      // A change between the stat above and the watch's start: the next call stats once more.
      this.changed = true;
    } catch {
      this.retryWatchAt = now + RECHECK_MS;
    }
  }
}
