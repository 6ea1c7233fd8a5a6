/**
 * A lean HTTP/1.1 load generator for large responses: keep-alive sockets that send the next GET as
 * soon as the previous response's bytes (headers + Content-Length) have passed, counting bytes
 * without copying or parsing bodies. A general client (undici) spends more CPU per megabyte than
 * the server under test does, which would measure the client instead.
 */
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

export interface RawLoadResult {
  opsPerSecond: number;
  operations: number;
  errors: number;
  statuses: Record<number, number>;
}

/** Runs `connections` sockets against `url` + `path` for `durationMs`. */
export async function rawHttpLoad(
  url: string,
  path: string,
  headers: Record<string, string>,
  { connections = 16, durationMs = 3000 } = {},
): Promise<RawLoadResult> {
  const { hostname, port } = new URL(url);
  const request = Buffer.from(
    `GET ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\n${Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('')}\r\n`,
  );
  const statuses: Record<number, number> = {};
  let operations = 0;
  let errors = 0;
  const start = performance.now();
  const deadline = start + durationMs;
  await Promise.all(
    Array.from(
      { length: connections },
      () =>
        new Promise<void>((resolve) => {
          const socket = connect(Number(port), hostname);
          socket.setNoDelay(true);
          let head: Buffer = Buffer.alloc(0);
          let remaining = -1; // body bytes still to skip; -1 while reading a head
          const next = () => {
            if (performance.now() >= deadline) {
              socket.end();
              return resolve();
            }
            socket.write(request);
          };
          socket.on('connect', next);
          socket.on('error', () => {
            errors++;
            resolve();
          });
          socket.on('data', (chunk: Buffer) => {
            let data: Buffer = chunk;
            while (data.length > 0) {
              if (remaining < 0) {
                head = head.length === 0 ? data : Buffer.concat([head, data]);
                const end = head.indexOf('\r\n\r\n');
                if (end < 0) return;
                const text = head.subarray(0, end).toString('latin1');
                const status = Number(text.slice(9, 12));
                statuses[status] = (statuses[status] ?? 0) + 1;
                const length = /\r\ncontent-length: *(\d+)/i.exec(text)?.[1];
                remaining = status === 304 ? 0 : Number(length ?? 0);
                data = head.subarray(end + 4);
                head = Buffer.alloc(0);
              }
              const take = Math.min(remaining, data.length);
              remaining -= take;
              data = data.subarray(take);
              if (remaining === 0) {
                remaining = -1;
                operations++;
                next();
              }
            }
          });
        }),
    ),
  );
  const elapsed = (performance.now() - start) / 1000;
  return { opsPerSecond: operations / elapsed, operations, errors, statuses };
}

interface ThreadTask {
  url: string;
  path: string;
  headers: Record<string, string>;
  connections: number;
  durationMs: number;
}

/**
 * `rawHttpLoad` from `threads` worker threads at once (connections split between them), so one
 * client thread reading large bodies is not what the figure measures. Statuses and operations
 * are summed; `process.cpuUsage()` in the caller includes the workers.
 */
export async function rawHttpLoadThreads(
  url: string,
  path: string,
  headers: Record<string, string>,
  { connections = 16, durationMs = 3000, threads = 2 } = {},
): Promise<RawLoadResult> {
  if (threads <= 1) return rawHttpLoad(url, path, headers, { connections, durationMs });
  const per = Math.max(1, Math.floor(connections / threads));
  const results = await Promise.all(
    Array.from({ length: threads }, () => {
      const task: ThreadTask = { url, path, headers, connections: per, durationMs };
      const worker = new Worker(new URL(import.meta.url), { workerData: { rawHttpLoad: task } });
      return new Promise<RawLoadResult>((resolve, reject) => {
        worker.once('message', (result: RawLoadResult) => {
          void worker.terminate();
          resolve(result);
        });
        worker.once('error', reject);
      });
    }),
  );
  const statuses: Record<number, number> = {};
  for (const result of results) {
    for (const [status, count] of Object.entries(result.statuses)) {
      statuses[Number(status)] = (statuses[Number(status)] ?? 0) + count;
    }
  }
  return {
    opsPerSecond: results.reduce((sum, r) => sum + r.opsPerSecond, 0),
    operations: results.reduce((sum, r) => sum + r.operations, 0),
    errors: results.reduce((sum, r) => sum + r.errors, 0),
    statuses,
  };
}

if (!isMainThread && (workerData as { rawHttpLoad?: ThreadTask } | null)?.rawHttpLoad) {
  const task = (workerData as { rawHttpLoad: ThreadTask }).rawHttpLoad;
  void rawHttpLoad(task.url, task.path, task.headers, task).then((result) =>
    parentPort!.postMessage(result),
  );
}
