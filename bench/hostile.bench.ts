/**
 * Hostile text through the tokenizer (decision 100): 64 KB and 1 MB of whitespace-free text and
 * of base64, counted directly and through a real buyer's `POST /v1/messages/count_tokens`, one
 * at a time and 8 in flight. Reports the time per count, the buyer's worst event-loop delay
 * (`monitorEventLoopDelay`, the buyer runs in this process) and the slowest `GET /v1/models`
 * answered meanwhile; then the same counts in a worker-thread pool, the alternative to sliced
 * counting, and js-tiktoken's own encoder on short texts as the old path's baseline.
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { startTestBuyer } from '../src/buyer/testing/testBuyer.js';
import { countTextTokens } from '../src/formats/tokens.js';
import { tablesComplete } from '../src/formats/tokensTables.js';
import { printFigure, stats } from './lib.js';

const SIZES = [
  ['64KB', 64 * 1024],
  ['1MB', 1024 * 1024],
] as const;

const KINDS: Record<string, (bytes: number) => string> = {
  // The report's example: one letter repeated.
  'x-run': (bytes) => 'x'.repeat(bytes),
  // Random lower-case letters: one pre-token with no common merges, the slowest text measured.
  // (Built in a buffer: a megabyte concatenated char by char held this process's event loop, which
  // the buyer shares, ~40 ms, and was measured as the buyer's delay.)
  letters: (bytes) => {
    const random = randomBytes(bytes);
    for (let i = 0; i < random.length; i++) random[i] = 97 + ((random[i] as number) % 26);
    return random.toString('latin1');
  },
  base64: (bytes) =>
    randomBytes(Math.ceil((bytes * 3) / 4))
      .toString('base64')
      .slice(0, bytes),
};

/** Each request gets its own text, so no count is served from the tokenizer's cache. */
function fresh(kind: string, bytes: number, n: number): string {
  return `${n}${(KINDS[kind] as (bytes: number) => string)(bytes - 8)}`;
}

interface Phase {
  perCountMs: ReturnType<typeof stats>;
  worstLoopDelayMs: number;
  slowestModelsMs: number;
}

/** Runs `jobs` (each timed) while the event loop is watched and /v1/models is polled. */
async function watched(url: string, jobs: (() => Promise<unknown>)[]): Promise<Phase> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  const modelsMs: number[] = [];
  let running = true;
  const poller = (async () => {
    while (running) {
      const start = performance.now();
      try {
        await (await fetch(`${url}/v1/models`)).arrayBuffer();
        modelsMs.push(performance.now() - start);
      } catch {
        // A keep-alive connection closed under the probe: the next probe opens a new one.
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  histogram.enable();
  const durations = await Promise.all(
    jobs.map(async (job) => {
      const start = performance.now();
      await job();
      return performance.now() - start;
    }),
  );
  histogram.disable();
  running = false;
  await poller;
  return {
    perCountMs: stats(durations),
    worstLoopDelayMs: histogram.max / 1e6,
    slowestModelsMs: Math.max(0, ...modelsMs),
  };
}

async function countOverHttp(url: string, text: string, attempt = 0): Promise<void> {
  const response = await fetch(`${url}/v1/messages/count_tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude', messages: [{ role: 'user', content: text }] }),
  }).catch((error: unknown) => {
    // A reused keep-alive connection the server had just closed: once more on a new one.
    if (attempt > 0) throw error;
    return undefined;
  });
  if (!response) return countOverHttp(url, text, attempt + 1);
  const body = (await response.json()) as { input_tokens?: number };
  if (response.status !== 200 || typeof body.input_tokens !== 'number')
    throw new Error(`count_tokens answered ${response.status}`);
}

class WorkerPool {
  private readonly workers: Worker[];
  private next = 0;
  private id = 0;
  private readonly waiting = new Map<number, (tokens: number) => void>();

  constructor(size: number) {
    this.workers = Array.from({ length: size }, () => {
      const worker = new Worker(new URL('./hostileWorker.ts', import.meta.url), {
        execArgv: ['--import', 'tsx'],
      });
      worker.on('message', (message: { id: number; tokens: number }) => {
        this.waiting.get(message.id)?.(message.tokens);
        this.waiting.delete(message.id);
      });
      return worker;
    });
  }

  count(text: string): Promise<number> {
    const id = this.id++;
    const worker = this.workers[this.next++ % this.workers.length] as Worker;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      worker.postMessage({ id, text });
    });
  }

  async stop(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }
}

export default async function hostile(): Promise<Record<string, unknown>> {
  const results: Record<string, unknown> = {};
  countTextTokens('warm the rank tables up');
  // Their pair index fills in the background after the first count: measure the steady state.
  await tablesComplete();
  const buyer = await startTestBuyer();
  const pool = new WorkerPool(2);
  await Promise.all([pool.count('warm'), pool.count('up')]);
  let n = 0;
  try {
    // The noise floor: the loop's worst delay while nothing is counted (other processes on the
    // machine delay it too; compare the figures below with this one).
    const idle = await watched(buyer.url, [
      () => new Promise((resolve) => setTimeout(resolve, 2_000)),
    ]);
    results.idle = {
      worstLoopDelayMs: idle.worstLoopDelayMs,
      slowestModelsMs: idle.slowestModelsMs,
    };
    printFigure('idle: worst event-loop delay (noise floor)', idle.worstLoopDelayMs, 'ms');
    printFigure('idle: slowest GET /v1/models', idle.slowestModelsMs, 'ms');
    for (const kind of Object.keys(KINDS)) {
      for (const [sizeLabel, bytes] of SIZES) {
        const label = `${kind} ${sizeLabel}`;
        const rounds = bytes > 100_000 ? 3 : 8;
        const direct: number[] = [];
        const directCpu: number[] = [];
        for (let i = 0; i < rounds; i++) {
          const text = fresh(kind, bytes, n++);
          const cpu = process.cpuUsage();
          const start = performance.now();
          countTextTokens(text);
          direct.push(performance.now() - start);
          const used = process.cpuUsage(cpu);
          directCpu.push((used.user + used.system) / 1000);
        }
        const serial = await watched(buyer.url, [
          async () => {
            for (let i = 0; i < rounds; i++)
              await countOverHttp(buyer.url, fresh(kind, bytes, n++));
          },
        ]);
        const inFlight = await watched(
          buyer.url,
          Array.from({ length: 8 }, () => {
            const text = fresh(kind, bytes, n++);
            return () => countOverHttp(buyer.url, text);
          }),
        );
        const workerOne = await watched(buyer.url, [
          async () => {
            for (let i = 0; i < rounds; i++) await pool.count(fresh(kind, bytes, n++));
          },
        ]);
        const workerEight = await watched(
          buyer.url,
          Array.from({ length: 8 }, () => {
            const text = fresh(kind, bytes, n++);
            return () => pool.count(text);
          }),
        );
        const directStats = stats(direct);
        const cpuStats = stats(directCpu);
        results[label] = {
          directCountMs: directStats,
          directCountCpuMs: cpuStats,
          buyerOneAtATime: {
            perCountMs: serial.perCountMs.meanMs / rounds,
            worstLoopDelayMs: serial.worstLoopDelayMs,
            slowestModelsMs: serial.slowestModelsMs,
          },
          buyerEightInFlight: inFlight,
          workerPoolOneAtATime: {
            perCountMs: workerOne.perCountMs.meanMs / rounds,
            worstLoopDelayMs: workerOne.worstLoopDelayMs,
          },
          workerPoolEightInFlight: {
            perCountMs: workerEight.perCountMs,
            worstLoopDelayMs: workerEight.worstLoopDelayMs,
          },
        };
        printFigure(`${label}: count (direct, p50)`, directStats.p50Ms, 'ms');
        printFigure(`${label}: count (direct, CPU time p50)`, cpuStats.p50Ms, 'ms');
        printFigure(
          `${label}: buyer count_tokens, one at a time`,
          serial.perCountMs.meanMs / rounds,
          'ms',
        );
        printFigure(`${label}:   worst event-loop delay`, serial.worstLoopDelayMs, 'ms');
        printFigure(`${label}:   slowest GET /v1/models`, serial.slowestModelsMs, 'ms');
        printFigure(`${label}: buyer, 8 in flight (max)`, inFlight.perCountMs.maxMs, 'ms');
        printFigure(`${label}:   worst event-loop delay`, inFlight.worstLoopDelayMs, 'ms');
        printFigure(`${label}:   slowest GET /v1/models`, inFlight.slowestModelsMs, 'ms');
        printFigure(
          `${label}: worker pool (2), one at a time`,
          workerOne.perCountMs.meanMs / rounds,
          'ms',
        );
        printFigure(`${label}:   worst event-loop delay`, workerOne.worstLoopDelayMs, 'ms');
        printFigure(`${label}: worker pool, 8 in flight (max)`, workerEight.perCountMs.maxMs, 'ms');
        printFigure(`${label}:   worst event-loop delay`, workerEight.worstLoopDelayMs, 'ms');
      }
    }
    // The old path: js-tiktoken's encoder, on texts short enough to finish.
    const require = createRequire(import.meta.url);
    const lite = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');
    const reference = new lite.Tiktoken(
      require('js-tiktoken/ranks/o200k_base') as ConstructorParameters<typeof lite.Tiktoken>[0],
    );
    for (const chars of [1_000, 4_000]) {
      const text = fresh('letters', chars, n++);
      const start = performance.now();
      reference.encode(text, 'all');
      const oldMs = performance.now() - start;
      const ourStart = performance.now();
      countTextTokens(fresh('letters', chars, n++));
      const ourMs = performance.now() - ourStart;
      results[`js-tiktoken letters ${chars}`] = { oldMs, ourMs };
      printFigure(`js-tiktoken, ${chars} random letters`, oldMs, 'ms');
      printFigure(`ours, ${chars} random letters`, ourMs, 'ms');
    }
  } finally {
    await pool.stop();
    await buyer.stop();
  }
  return results;
}
