/**
 * A warm request at a distance (bench/distance.bench.ts): timing one request, and where a warm
 * request's time goes, from the relay's record of every chunk it relayed
 * (bench/delayRelayWorker.ts; the relay's clock and this thread's both count from the epoch, to
 * the microsecond). A request's time splits into the buyer's part before the wire (the client's
 * send until its first byte reaches the relay), the wire (the relay's holds, up and down), the
 * seller's part (the request's last byte handed to the seller until the answer's first byte
 * reaches the relay: the seller, its upstream, and waking up to them) and the buyer's part after
 * the wire (the answer's last byte handed to the buyer until the client has it). With no delay
 * the same split is the local cost.
 *
 * A request one after another with no delay runs on a hot CPU; one that waits on a network, even
 * 2 ms each way, runs its code cold after the wait, and every part of it is slower, the fake
 * upstream's too. So the bench also measures warm requests at a small delay, right after each
 * distance (`IDLE_DELAY_MS`): against them, what a distance adds beyond its round trip is the
 * distance's alone (docs/decisions/214-a-warm-request-at-distance.md).
 */
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import type { DelayRelay } from './delayRelay.js';
import type { RelayedChunk } from './delayRelayWorker.js';
import { type Stats, stats } from './lib.js';

/** The one-way delay of the waiting reference: the processes wait, the network is near. */
export const IDLE_DELAY_MS = Number(process.env.SVC_DISTANCE_IDLE_DELAY ?? 2);
export const WARM_SAMPLES = 30;
/** Echo round trips through the relay per delay, for its measured RTT. */
const ECHO_SAMPLES = 30;

export const MODEL = 'far-model';
const BODY = JSON.stringify({
  model: MODEL,
  stream: true,
  messages: [{ role: 'user', content: 'how far away are you?' }],
});

export interface Timing {
  firstTokenMs: number;
  lastByteMs: number;
  /**
   * CPU time of this process (every thread: the relay's too, as when it shared the buyer's) from
   * the request until its last byte.
   */
  cpuMs: number;
  status: number;
  /** The send and the last byte in ms since the epoch, as the relay's record counts. */
  sent: Sent;
}

/** CPU time so far of this process, in milliseconds (per-thread counts are in whole ticks). */
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** POSTs a streamed chat request; times the first chunk with a token and the last byte. */
export async function timed(url: string): Promise<Timing> {
  const cpuStart = cpuMs();
  const start = performance.now();
  const sentAt = performance.timeOrigin + start;
  const answer = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: BODY,
  });
  let firstTokenMs = Number.NaN;
  for await (const chunk of answer.body) {
    if (Number.isNaN(firstTokenMs) && (chunk as Buffer).includes('content'))
      firstTokenMs = performance.now() - start;
  }
  const lastByteMs = performance.now() - start;
  return {
    firstTokenMs,
    lastByteMs,
    cpuMs: cpuMs() - cpuStart,
    status: answer.statusCode,
    sent: { sentAt, doneAt: sentAt + lastByteMs },
  };
}

export interface CaseFigures {
  firstToken: Stats;
  lastByte: Stats;
  cpu: Stats;
}

export function figures(timings: Timing[]): CaseFigures {
  const served = timings.filter((t) => t.status === 200);
  if (served.length < timings.length) throw new Error(`${timings.length - served.length} failed`);
  return {
    firstToken: stats(served.map((t) => t.firstTokenMs)),
    lastByte: stats(served.map((t) => t.lastByteMs)),
    cpu: stats(served.map((t) => t.cpuMs)),
  };
}

/** A request's send and last byte, in ms since the epoch. */
export interface Sent {
  sentAt: number;
  doneAt: number;
}

export interface WarmSplit {
  buyerBefore: Stats;
  seller: Stats;
  buyerAfter: Stats;
  /** How late the relay handed on each request's last byte and answer's last byte, added. */
  relayLate: Stats;
  /** Requests the record could split (a chunk of other traffic can hide one). */
  split: number;
}

/** Splits each request by the chunks the relay handed on between its send and its last byte. */
function splitWarm(requests: Sent[], chunks: RelayedChunk[]): WarmSplit {
  const parts = { buyerBefore: [], seller: [], buyerAfter: [], relayLate: [] } as Record<
    keyof Omit<WarmSplit, 'split'>,
    number[]
  >;
  for (const { sentAt, doneAt } of requests) {
    const during = chunks.filter((c) => c.arrivedAt >= sentAt && c.sentAt <= doneAt);
    const up = during.filter((c) => c.toTarget);
    const lastUp = up.at(-1);
    if (lastUp === undefined) continue;
    const down = during.filter((c) => !c.toTarget && c.arrivedAt > lastUp.sentAt);
    const firstDown = down[0];
    const lastDown = down.at(-1);
    if (firstDown === undefined || lastDown === undefined) continue;
    parts.buyerBefore.push(up[0]!.arrivedAt - sentAt);
    parts.seller.push(firstDown.arrivedAt - lastUp.sentAt);
    parts.buyerAfter.push(doneAt - lastDown.sentAt);
    const late = (c: RelayedChunk) => c.sentAt - c.arrivedAt - c.delayMs;
    parts.relayLate.push(late(lastUp) + late(lastDown));
  }
  return {
    buyerBefore: stats(parts.buyerBefore),
    seller: stats(parts.seller),
    buyerAfter: stats(parts.buyerAfter),
    relayLate: stats(parts.relayLate),
    split: parts.seller.length,
  };
}

/** Warm requests and round trips at one delay, as one pass of the bench measures them. */
export interface WarmRun {
  /** Echo round trips to the relay's thread, and to this one (bench/delayRelay.ts). */
  echo: Stats;
  echoHere: Stats;
  warm: Timing[];
  split: WarmSplit;
}

/**
 * Sets the relay's delay, measures its round trips, then `WARM_SAMPLES` warm requests to `url`
 * one after another, recorded by the relay. The connection must be open already.
 */
export async function warmRun(relay: DelayRelay, delayMs: number, url: string): Promise<WarmRun> {
  await relay.setDelay(delayMs);
  const echo = stats(await relay.roundTrips(ECHO_SAMPLES));
  const echoHere = stats(await relay.roundTrips(ECHO_SAMPLES, 'here'));
  await timed(url);
  await relay.trace(true);
  const warm: Timing[] = [];
  for (let i = 0; i < WARM_SAMPLES; i++) warm.push(await timed(url));
  const split = splitWarm(
    warm.map((t) => t.sent),
    await relay.trace(false),
  );
  return { echo, echoHere, warm, split };
}

/** How much each part of `split` grew over `local`'s, p50 against p50, as one line. */
export function grownLine(split: WarmSplit, local: WarmSplit | undefined): string {
  const grew = (part: 'buyerBefore' | 'seller' | 'buyerAfter') =>
    (split[part].p50Ms - (local?.[part].p50Ms ?? 0)).toFixed(2);
  return (
    `buyer before the wire ${grew('buyerBefore')} ms, seller ${grew('seller')} ms, ` +
    `buyer after the wire ${grew('buyerAfter')} ms`
  );
}
