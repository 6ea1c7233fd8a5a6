/**
 * Two more lanes of `npm run bench -- compare`, after Busbar's "On the Bench" harness:
 *
 * - sustained: the most requests per second each target serves with p99 under 1 s while the
 *   upstream takes 20 ms per answer (concurrency doubled from 16 to 512; a step with p99 over
 *   1 s or an error does not count, and one with an error or p99 over 5 s ends the search: one
 *   pause of a busy machine does not end it early);
 * - translated: Anthropic messages requests to svc's targets, answered by the chat-completions
 *   seller (translated both ways by the buyer), interleaved round by round with the same
 *   upstream called directly in chat form; Portkey has no messages → chat route to compare.
 */
import { performance } from 'node:perf_hooks';
import { type Client, send } from './compareClient.js';
import { roundOrder, type Stats, stats } from './lib.js';

const SUSTAIN_MS = 2_000;
const MAX_CONCURRENCY = 512;
const P99_LIMIT_MS = 1_000;
const OVERLOADED_P99_MS = 5_000;

export interface SustainedStep {
  concurrency: number;
  requestsPerSecond: number;
  p99Ms: number;
  errors: number;
}

/** One target at one concurrency for SUSTAIN_MS: its rate, p99 and errors. */
async function step(client: Client, bodies: string[], concurrency: number): Promise<SustainedStep> {
  const deadline = performance.now() + SUSTAIN_MS;
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const sent = performance.now();
        try {
          await send(client, bodies[next++ % bodies.length]!);
          latencies.push(performance.now() - sent);
        } catch {
          errors++;
        }
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  return {
    concurrency,
    requestsPerSecond: latencies.length / seconds,
    p99Ms: stats(latencies).p99Ms,
    errors,
  };
}

/** The best rate with p99 under 1 s and no error, and every step taken to find it. */
export async function sustained(
  client: Client,
  bodies: string[],
): Promise<{ requestsPerSecond: number; steps: SustainedStep[] }> {
  const steps: SustainedStep[] = [];
  let best = 0;
  for (let concurrency = 16; concurrency <= MAX_CONCURRENCY; concurrency *= 2) {
    const measured = await step(client, bodies, concurrency);
    steps.push(measured);
    if (measured.errors > 0 || measured.p99Ms >= OVERLOADED_P99_MS) break;
    if (measured.p99Ms < P99_LIMIT_MS) best = Math.max(best, measured.requestsPerSecond);
  }
  return { requestsPerSecond: best, steps };
}

/**
 * Messages requests to each of `targets` (and chat requests to `direct`), round by round in
 * shuffled order; the added p50 and p99 of each over direct.
 */
export async function translated(
  direct: Client,
  targets: Record<string, Client>,
  chatBodies: string[],
  messageBodies: string[],
  rounds: number,
): Promise<Record<string, { latency: Stats; addedP50Ms: number; addedP99Ms: number }>> {
  const names = ['direct', ...Object.keys(targets)];
  const samples: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = -20; round < rounds; round++) {
    const index = round + 20;
    for (const name of roundOrder(names, index)) {
      const started = performance.now();
      if (name === 'direct') await send(direct, chatBodies[index % chatBodies.length]!);
      else {
        const client = { ...targets[name]!, path: '/v1/messages' };
        await send(client, messageBodies[index % messageBodies.length]!);
      }
      if (round >= 0) samples[name]!.push(performance.now() - started);
    }
  }
  const base = stats(samples.direct!);
  return Object.fromEntries(
    names.map((name) => {
      const latency = stats(samples[name]!);
      return [
        name,
        {
          latency,
          addedP50Ms: latency.p50Ms - base.p50Ms,
          addedP99Ms: latency.p99Ms - base.p99Ms,
        },
      ];
    }),
  );
}
