/**
 * JSON log lines leave in batches: everything written within `flushMs` (20 ms) goes out in one
 * write. Every line was its own synchronous `write` to stderr, a syscall that also wakes the
 * reader (a terminal, a log collector): ~10 % of a seller's CPU per request, for one request
 * line per request. Lines keep their order and bytes and reach stderr at most `flushMs` later;
 * whatever is pending when the process exits is written then (`exit` handlers run
 * synchronously). Only a process killed outright (SIGKILL) loses its last `flushMs` of lines.
 */

const FLUSH_MS = 20;

/** A destination for pino that batches writes to `target`. */
export function batchedWriter(
  target: NodeJS.WritableStream,
  flushMs = FLUSH_MS,
): { write(line: string): boolean } {
  let pending: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    if (pending.length === 0) return;
    const text = pending.length === 1 ? pending[0]! : pending.join('');
    pending = [];
    target.write(text);
  };
  process.on('exit', flush);
  return {
    write(line) {
      pending.push(line);
      if (timer === undefined) {
        // Unreferenced: a process that is otherwise done exits at once (and flushes on exit).
        timer = setTimeout(flush, flushMs);
        timer.unref();
      }
      return true;
    },
  };
}

let stderr: { write(line: string): boolean } | undefined;

/** The process's one batched stderr (one `exit` listener however many loggers use it). */
export function batchedStderr(): { write(line: string): boolean } {
  stderr ??= batchedWriter(process.stderr);
  return stderr;
}
