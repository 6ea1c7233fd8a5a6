/**
 * A new connection's local set-up with nothing between the buyer and the seller
 * (bench/distance.bench.ts). With no delay the relay still costs its thread's hops, and a new
 * connection crosses it more often than a warm request: the TCP handshake becomes the relay's
 * accept and its own connect to the seller, and Noise's first messages each cross it before the
 * request can. The relayed figure so counts part of the bench's network as set-up. Here the buyer
 * dials the seller's own listening address by route, as a request dials a route
 * (docs/decisions/216-a-dial-by-route.md), and the warm references run on that same direct
 * connection: both sides of the difference are svc's processes and loopback alone.
 */
import { performance } from 'node:perf_hooks';
import type { PeerId as Libp2pPeerId } from '@libp2p/interface';
import type { Multiaddr } from '@multiformats/multiaddr';
import type { RunningBuyerNode } from '../src/buyer/runBuyerNode.js';
import { cutConnection, settled } from './distanceSeller.js';
import { type CaseFigures, figures, type Timing, timed, WARM_SAMPLES } from './distanceWarm.js';
import { printFigure } from './lib.js';

export interface DirectSetUp {
  /** Requests one after another on the direct connection. */
  warm: CaseFigures;
  /** A dial by route to the seller's own address, then the request, after a pause. */
  newConnection: CaseFigures;
  /** A request on the direct connection after the same pause. */
  warmAfterPause: CaseFigures;
}

export interface DirectOptions {
  buyer: RunningBuyerNode;
  /** The seller's svc peer id (the directory's key) and its libp2p peer id. */
  sellerId: string;
  seller: Libp2pPeerId;
  /** The seller's own listening address, not the relay's. */
  address: Multiaddr;
  chat: string;
  samples: number;
  pauseMs: number;
}

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** Dials `address` by route and times the request that follows as one new connection's request. */
async function dialThenRequest(options: DirectOptions): Promise<Timing> {
  const cpuStart = cpuMs();
  const start = performance.now();
  const dial = options.buyer.node.libp2p.services.routeDialer.dial(
    options.seller,
    [options.address],
    AbortSignal.timeout(10_000),
  );
  if (dial === undefined) throw new Error('the route dialer declined the seller’s own address');
  await dial;
  const dialMs = performance.now() - start;
  const answer = await timed(options.chat);
  return {
    ...answer,
    firstTokenMs: dialMs + answer.firstTokenMs,
    lastByteMs: dialMs + answer.lastByteMs,
    cpuMs: cpuMs() - cpuStart,
  };
}

/** Whether every connection of the buyer to the seller goes to its own address. */
function direct(options: DirectOptions): boolean {
  const connections = options.buyer.node.libp2p.getConnections(options.seller);
  const own = options.address.toString();
  return (
    connections.length > 0 &&
    connections.every((c) => c.remoteAddr.toString().startsWith(`${own}/`))
  );
}

export async function directSetUp(options: DirectOptions): Promise<DirectSetUp> {
  const pause = () => new Promise((resolve) => setTimeout(resolve, options.pauseMs));
  await settled(options.buyer, options.sellerId);
  await cutConnection(options.buyer, options.seller);
  await pause();
  await dialThenRequest(options);
  if (!direct(options)) throw new Error('the request did not go on the direct connection');
  const warm: Timing[] = [];
  for (let i = 0; i < WARM_SAMPLES; i++) warm.push(await timed(options.chat));
  const cold: Timing[] = [];
  const warmAfterPause: Timing[] = [];
  for (let i = 0; i < options.samples; i++) {
    await settled(options.buyer, options.sellerId);
    await cutConnection(options.buyer, options.seller);
    await pause();
    cold.push(await dialThenRequest(options));
    await pause();
    warmAfterPause.push(await timed(options.chat));
  }
  if (!direct(options)) throw new Error('a request left the direct connection');
  // The stages after this one dial through the relay again.
  await settled(options.buyer, options.sellerId);
  await cutConnection(options.buyer, options.seller);
  return {
    warm: figures(warm),
    newConnection: figures(cold),
    warmAfterPause: figures(warmAfterPause),
  };
}

/** The figures of `directSetUp`, as the relayed set-up's are printed. */
export function printNoRelay(figures: DirectSetUp): void {
  const { warm, newConnection, warmAfterPause } = figures;
  printFigure('no relay: warm p50', warm.lastByte.p50Ms, 'ms');
  printFigure(
    'no relay: new connection (dial by route + request) p50',
    newConnection.lastByte.p50Ms,
    'ms',
  );
  printFigure(
    'no relay: new connection local set-up p50',
    newConnection.lastByte.p50Ms - warm.lastByte.p50Ms,
    'ms',
    '<= 10 ms',
  );
  printFigure(
    'no relay: the same, CPU p50 (both ends)',
    newConnection.cpu.p50Ms - warm.cpu.p50Ms,
    'ms',
  );
  printFigure(
    'no relay: set-up over warm after the same pause p50',
    newConnection.lastByte.p50Ms - warmAfterPause.lastByte.p50Ms,
    'ms',
  );
}
