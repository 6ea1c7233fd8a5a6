/**
 * Log lines written during one turn of the event loop leave in one write. Every JSON log line
 * was its own synchronous `write` to stderr (a syscall: ~10 % of a seller's CPU under load, one
 * request line per request); under concurrent requests several lines end in the same turn.
 * Lines keep their order and bytes; they reach stderr at the end of the turn (`setImmediate`),
 * and whatever is pending when the process exits is written then (`exit` runs synchronously).
 */

/** A destination for pino that batches `target`'s writes per event-loop turn. */
export function turnWriter(target: NodeJS.WritableStream): { write(line: string): boolean } {
  let pending: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.length === 1 ? pending[0]! : pending.join('');
    pending = [];
    target.write(text);
  };
  process.on('exit', flush);
  return {
    write(line) {
      pending.push(line);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
      return true;
    },
  };
}

let stderr: { write(line: string): boolean } | undefined;

/** The process's one batched stderr (one `exit` listener however many loggers use it). */
export function batchedStderr(): { write(line: string): boolean } {
  stderr ??= turnWriter(process.stderr);
  return stderr;
}
