/**
 * Steady load for the churn test and what each request came to, as the client saw it: plain
 * fetch, so a failure is classed by whether any byte of the answer had reached the client.
 */
import { CHURN_MODEL } from './churnNetwork.js';

export interface LoadTarget {
  name: string;
  /** The OpenAI base, `.../v1`. */
  baseUrl: string;
  headers: Record<string, string>;
}

export interface RequestOutcome {
  target: string;
  stream: boolean;
  /** ms since the load started. */
  at: number;
  /** ms since the load started when the answer ended (or failed). */
  endedAt?: number;
  ok: boolean;
  /** 'ok', or `<status>:<error code>` before any byte, or `midstream:<cause>` after. */
  cause: string;
  /** Some byte of the answer had reached the client before it failed. */
  started: boolean;
  peer: string | null;
  /** The buyer's `x-svc-attempts` of a failure (each seller tried and why it failed). */
  attempts?: string;
  /** The error's message, cut to 300 characters (why a request failed before any byte). */
  message?: string;
}

const QUESTION = { role: 'user', content: 'One more, please.' };

async function one(target: LoadTarget, stream: boolean, t0: number): Promise<RequestOutcome> {
  const at = Date.now() - t0;
  const base = { target: target.name, stream, at };
  let response: Response;
  try {
    response = await fetch(`${target.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...target.headers },
      body: JSON.stringify({ model: CHURN_MODEL, messages: [QUESTION], stream }),
    });
  } catch (error) {
    const cause = error instanceof Error ? (error.cause as Error | undefined)?.message : '';
    return { ...base, ok: false, cause: `fetch:${cause ?? 'error'}`, started: false, peer: null };
  }
  const peer = response.headers.get('x-svc-peer-id');
  if (response.status !== 200) {
    const text = await response.text().catch(() => '');
    let code = 'unknown';
    let message = text.slice(0, 300);
    try {
      const { error } = JSON.parse(text) as { error?: { code?: string; message?: string } };
      code = error?.code ?? 'unknown';
      message = (error?.message ?? '').slice(0, 300);
    } catch {
      // not JSON: the status says enough
    }
    const attempts = response.headers.get('x-svc-attempts') ?? '';
    return {
      ...base,
      ok: false,
      cause: `${response.status}:${code}`,
      started: false,
      peer,
      attempts,
      message,
    };
  }
  let text = '';
  try {
    text = await response.text();
  } catch (error) {
    const why = error instanceof Error ? error.message : 'error';
    return { ...base, ok: false, cause: `midstream:${why}`, started: true, peer };
  }
  if (!stream) {
    const answer = JSON.parse(text) as { choices?: Array<{ message?: { content?: string } }> };
    const ok = Boolean(answer.choices?.[0]?.message?.content);
    return { ...base, ok, cause: ok ? 'ok' : 'empty_answer', started: true, peer };
  }
  if (text.includes('data: [DONE]') && !/"error"\s*:/.test(text)) {
    return { ...base, ok: true, cause: 'ok', started: true, peer };
  }
  const code = /"code"\s*:\s*"([a-z_]+)"/.exec(text)?.[1];
  if (code === undefined) {
    // Neither [DONE] nor an error event: the stream ended as if whole. Kept to be looked at.
    const message = `${response.headers.get('x-svc-attempts') ?? ''} …${text.slice(-300)}`;
    return { ...base, ok: false, cause: 'midstream:truncated', started: true, peer, message };
  }
  return { ...base, ok: false, cause: `midstream:${code}`, started: true, peer };
}

/**
 * `workers` loops per target, each sending one request after the other (every other one a
 * stream) until `signal` aborts, adding each outcome to `outcomes` as it ends; resolves once the
 * last in flight ended.
 */
export async function runLoad(
  targets: LoadTarget[],
  workers: number,
  signal: AbortSignal,
  t0: number,
  outcomes: RequestOutcome[],
): Promise<void> {
  const loop = async (target: LoadTarget, worker: number) => {
    let stream = worker % 2 === 0;
    while (!signal.aborted) {
      const outcome = await one(target, stream, t0);
      outcome.endedAt = Date.now() - t0;
      outcomes.push(outcome);
      stream = !stream;
      // A short pause: steady load, not a flood that would measure the 2-core box instead.
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  await Promise.all(
    targets.flatMap((target) => Array.from({ length: workers }, (_, i) => loop(target, i))),
  );
}

/** Peers that served the outcomes since `sinceMs` (load time), busiest first. */
export function busiestPeers(outcomes: RequestOutcome[], sinceMs: number): string[] {
  const counts = new Map<string, number>();
  for (let i = outcomes.length - 1; i >= 0 && outcomes[i]!.at >= sinceMs; i--) {
    const peer = outcomes[i]!.peer;
    if (peer) counts.set(peer, (counts.get(peer) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1]).map(([peer]) => peer);
}

/** Outcome counts by cause, most frequent first. */
export function countCauses(outcomes: RequestOutcome[]): Record<string, number> {
  const counts = new Map<string, number>();
  for (const outcome of outcomes) counts.set(outcome.cause, (counts.get(outcome.cause) ?? 0) + 1);
  return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]));
}

/** A fault the test dealt a seller, `at` ms since the load started. */
export interface FaultEvent {
  at: number;
  kind: 'kill' | 'freeze';
  /** The seller's address, lowercase, without 0x (as `x-svc-peer-id` names it). */
  peer: string;
}

/**
 * Which fault cut each stream that failed after its first byte: the kill or freeze of the seller
 * serving it while it streamed, or none (a failure no fault of the test explains).
 */
export function cutsByFault(
  outcomes: RequestOutcome[],
  faults: FaultEvent[],
): Record<'kill' | 'freeze' | 'none', number> {
  const counts = { kill: 0, freeze: 0, none: 0 };
  for (const o of outcomes) {
    if (o.ok || !o.started) continue;
    const peer = o.peer?.toLowerCase();
    const end = o.endedAt ?? Number.POSITIVE_INFINITY;
    const fault = faults.find((f) => f.peer === peer && f.at >= o.at && f.at <= end);
    counts[fault?.kind ?? 'none']++;
  }
  return counts;
}

/**
 * Each kill of a seller that was serving (requests started before and ended after the kill),
 * with how many: under a random pick most kills hit an idle seller, and the share of requests
 * served depends on the few that do not.
 */
export function killsWhileServing(outcomes: RequestOutcome[], faults: FaultEvent[]): string[] {
  const lines: string[] = [];
  for (const f of faults) {
    if (f.kind !== 'kill') continue;
    const serving = outcomes.filter(
      (o) => o.peer?.toLowerCase() === f.peer && o.at <= f.at && (o.endedAt ?? 0) >= f.at,
    ).length;
    if (serving > 0)
      lines.push(`${(f.at / 1000).toFixed(1)} s ${f.peer.slice(0, 8)}: ${serving} in flight`);
  }
  return lines;
}
