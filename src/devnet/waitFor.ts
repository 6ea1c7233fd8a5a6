/** Polls a check until it passes or a deadline passes; bounded, no fixed sleeps. */
import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitForOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Stops waiting early (e.g. the process being waited for exited). */
  signal?: AbortSignal;
  /** Describes what is awaited, for the timeout message. */
  what: string;
}

/** Resolves with the first truthy result of `check`; rejects on timeout or abort. */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false>,
  options: WaitForOptions,
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? 100;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (options.signal?.aborted)
      throw options.signal.reason ?? new Error(`stopped waiting for ${options.what}`);
    try {
      const result = await check();
      if (result) return result;
    } catch (error) {
      lastError = error;
    }
    await sleep(interval);
  }
  const reason = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
  throw new Error(
    `${options.what} was not ready after ${Math.round(options.timeoutMs / 1000)} s${reason}`,
  );
}

/** True when an HTTP GET to `url` answers with a status below 500. */
export async function httpReady(url: string): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
  await response.body?.cancel();
  return response.status < 500;
}
