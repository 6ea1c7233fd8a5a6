/**
 * Long token counts share one time slice per event-loop turn (decision 100): each pending count
 * is a `TokenCounter`; one driver advances them round-robin for at most COUNT_SLICE_MS, then
 * yields with `setImmediate`. One driver, not one per count, because every count yielding on
 * its own would queue N slices into the same turn and block for N × the slice.
 */
import type { TokenCounter } from './tokensBpe.js';

/** Longest stretch of counting between two yields to the event loop. */
export const COUNT_SLICE_MS = 8;
/** Characters counted between two looks at the clock (well under a millisecond of work). */
const STEP_CHARS = 2_048;

interface Job {
  counter: TokenCounter;
  resolve: (tokens: number) => void;
  reject: (error: unknown) => void;
}

const jobs: Job[] = [];
let driving = false;

function drive(): void {
  const sliceStart = performance.now();
  while (jobs.length > 0 && performance.now() - sliceStart < COUNT_SLICE_MS) {
    const job = jobs[0] as Job;
    try {
      if (job.counter.step(STEP_CHARS)) {
        jobs.shift();
        job.resolve(job.counter.tokens);
      } else if (jobs.length > 1) jobs.push(jobs.shift() as Job);
    } catch (error) {
      jobs.shift();
      job.reject(error);
    }
  }
  if (jobs.length > 0) setImmediate(drive);
  else driving = false;
}

/** Runs `counter` to the end in the shared slices; resolves with its token count. */
export function countInSlices(counter: TokenCounter): Promise<number> {
  return new Promise((resolve, reject) => {
    jobs.push({ counter, resolve, reject });
    if (!driving) {
      driving = true;
      setImmediate(drive);
    }
  });
}
