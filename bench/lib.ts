/**
 * Benchmark helpers: measure ours and a baseline in the same run, print ratios, save results.
 * Benchmarks never assert timings; they report them.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface Stats {
  samples: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  minMs: number;
  maxMs: number;
}

/** Summary statistics of durations in milliseconds. */
export function stats(durationsMs: number[]): Stats {
  const sorted = [...durationsMs].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    samples: sorted.length,
    meanMs: sum / Math.max(1, sorted.length),
    p50Ms: at(0.5),
    p90Ms: at(0.9),
    p99Ms: at(0.99),
    minMs: sorted[0] ?? 0,
    maxMs: sorted.at(-1) ?? 0,
  };
}

/** Runs `fn` `warmup` times unmeasured, then `iterations` times measured, one after another. */
/**
 * The order round `round` visits `items` in: a shuffle drawn from the round's number, so runs
 * repeat, no item is always first or last, and none always follows the same other one. A rotation
 * did the first two but not the third: what one target's processes do after an answer always
 * landed on the same next target.
 */
export function roundOrder<T>(items: readonly T[], round: number): T[] {
  const out = [...items];
  // mulberry32, seeded by the round: small, fast and evenly spread enough for an order.
  let seed = (round + 0x9e3779b9) >>> 0;
  const next = () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export async function measure(
  fn: () => unknown | Promise<unknown>,
  { iterations = 1000, warmup = 100 }: { iterations?: number; warmup?: number } = {},
): Promise<Stats> {
  for (let i = 0; i < warmup; i++) await fn();
  const durations: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    await fn();
    durations.push(performance.now() - start);
  }
  return stats(durations);
}

/** Runs `fn` with `concurrency` workers for `durationMs`; returns completed operations per second. */
export async function throughput(
  fn: () => Promise<unknown>,
  { concurrency = 32, durationMs = 3000 }: { concurrency?: number; durationMs?: number } = {},
): Promise<{ opsPerSecond: number; operations: number; errors: number }> {
  const deadline = performance.now() + durationMs;
  let operations = 0;
  let errors = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        try {
          await fn();
          operations++;
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  return { opsPerSecond: operations / elapsed, operations, errors };
}

/** One printed line: label, ours, baseline, ratio (ours / baseline). */
export function printComparison(label: string, ours: number, baseline: number, unit: string): void {
  const ratio = baseline === 0 ? Number.NaN : ours / baseline;
  console.log(
    `${label.padEnd(48)} ours ${ours.toFixed(3).padStart(10)} ${unit}  baseline ${baseline
      .toFixed(3)
      .padStart(10)} ${unit}  ratio ${ratio.toFixed(2)}x`,
  );
}

/** One printed line for a figure with a goal (reported, not asserted). */
export function printFigure(label: string, value: number, unit: string, goal?: string): void {
  console.log(
    `${label.padEnd(48)} ${value.toFixed(3).padStart(12)} ${unit}${goal ? `   (goal ${goal})` : ''}`,
  );
}

/** Writes `bench/results/<name>.json` with a timestamp and the machine's basics. */
export function saveResults(name: string, results: Record<string, unknown>): string {
  const dir = new URL('./results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const path = new URL(`${name}.json`, dir);
  const body = {
    name,
    at: new Date().toISOString(),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    results,
  };
  writeFileSync(
    path,
    `${JSON.stringify(body, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`,
  );
  return path.pathname;
}

/** CPU time (user + system, ms) a process has used, from /proc (Linux); null elsewhere. */
export function cpuMsOf(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

export interface ChildProcessHandle<T> {
  pid: number;
  /** What `ready` extracted from the child's output. */
  ready: T;
  /** What the child printed so far (once ready: the last 64–128 KiB). */
  output(): string;
  /** SIGTERM, then waits for exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

/**
 * A loopback port free right now, for a child that takes its port on the command line (two
 * benches at once must not collide on a fixed one).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** How much of a ready child's output is kept (for `output()`). */
const OUTPUT_TAIL = 64 * 1024;

/**
 * Spawns `node <args>` and waits until `ready(output)` returns something (stdout + stderr are
 * read continuously, so the child never blocks on a full pipe; once ready, only the last
 * 64–128 KiB are kept and nothing is scanned).
 */
export async function startChild<T>(
  args: string[],
  ready: (output: string) => T | undefined,
  { env = process.env, timeoutMs = 60_000 }: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<ChildProcessHandle<T>> {
  const child: ChildProcess = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...env, NODE_NO_WARNINGS: '1' },
  });
  let output = '';
  let isReady = false;
  let exited = child.exitCode !== null;
  child.once('exit', () => {
    exited = true;
  });
  const value = await new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`child did not become ready in ${timeoutMs} ms: ${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (isReady) {
        // The load generator must not spend its CPU on the child's logs: keep only a tail.
        if (output.length > OUTPUT_TAIL * 2) output = output.slice(-OUTPUT_TAIL);
        return;
      }
      const found = ready(output);
      if (found !== undefined) {
        isReady = true;
        clearTimeout(timer);
        resolve(found);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child exited (${code}) before it was ready: ${output}`));
    });
  });
  return {
    pid: child.pid ?? 0,
    ready: value,
    output: () => output,
    stop: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        if (exited) return resolve();
        const kill = setTimeout(() => {
          console.warn(`child ${child.pid} did not stop in ${graceMs} ms: killed`);
          child.kill('SIGKILL');
        }, graceMs);
        child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
