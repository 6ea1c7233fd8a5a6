/**
 * Requests at a delay and with none, taken in turns (bench/distance.bench.ts): measured minutes
 * apart, in separate passes, the two sides of "beyond its round trips" also differ by whatever
 * the machine did in between, and the no-delay pass's p50 alone moved between 3.1 and 6.6 ms
 * from run to run on a quiet machine; taken in turns, they share it
 * (docs/decisions/222-distance-goals-read-in-turns.md).
 */
import type { PeerId as Libp2pPeerId } from '@libp2p/interface';
import type { RunningBuyerNode } from '../src/buyer/runBuyerNode.js';
import type { DelayRelay } from './delayRelay.js';
import { cutConnection, settled } from './distanceSeller.js';
import { type CaseFigures, figures, type Timing, timed, WARM_SAMPLES } from './distanceWarm.js';
import { printFigure } from './lib.js';

/** Requests at a delay and with none, taken in turns. */
export interface InTurns {
  far: CaseFigures;
  near: CaseFigures;
}

/**
 * Warm requests to `url` alternately at `delayMs` each way and at none, on one connection, which
 * must be open already; the relay is left at `delayMs`.
 */
export async function interleavedWarm(
  relay: DelayRelay,
  delayMs: number,
  url: string,
): Promise<InTurns> {
  const far: Timing[] = [];
  const near: Timing[] = [];
  for (let i = 0; i < WARM_SAMPLES; i++) {
    await relay.setDelay(0);
    near.push(await timed(url));
    await relay.setDelay(delayMs);
    far.push(await timed(url));
  }
  return { far: figures(far), near: figures(near) };
}

/** What a request on a new connection needs to be set up in turns. */
export interface NewConnectionTurns {
  relay: DelayRelay;
  buyer: RunningBuyerNode;
  /** The seller's svc peer id, and its libp2p one (the connection cut before each request). */
  sellerId: string;
  seller: () => Libp2pPeerId;
  url: string;
  samples: number;
}

/**
 * The first request on a new connection, alternately at `delayMs` each way and at none: before
 * each, the connection is cut and both ends wait the same pause (long enough at the delay for
 * both to have seen the close), so the two sides differ by the distance alone. The relay is left
 * at `delayMs`.
 */
export async function interleavedNewConnection(
  { relay, buyer, sellerId, seller, url, samples }: NewConnectionTurns,
  delayMs: number,
): Promise<InTurns> {
  const far: Timing[] = [];
  const near: Timing[] = [];
  const pauseMs = 4 * delayMs + 20;
  for (let i = 0; i < samples; i++) {
    for (const [delay, into] of [
      [0, near],
      [delayMs, far],
    ] as const) {
      await settled(buyer, sellerId);
      await relay.setDelay(delay);
      await cutConnection(buyer, seller());
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      into.push(await timed(url));
    }
  }
  return { far: figures(far), near: figures(near) };
}

/** Prints what the requests at the delay added beyond `trips` measured RTT over those with none. */
export function printInTurns(
  name: string,
  { far, near }: InTurns,
  trips: number,
  measuredRttMs: number,
): void {
  printFigure(
    `${name}: added beyond ${trips} measured RTT, in turns with no delay`,
    far.lastByte.p50Ms - near.lastByte.p50Ms - trips * measuredRttMs,
    'ms',
    '<= 1 ms',
  );
}
