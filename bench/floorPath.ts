/**
 * Starts the floor of svc's request path (bench/floorNode.ts) in its own processes: a seller and
 * a buyer that keep svc's network layer and drop its request handling, a bare proxy in front of
 * that buyer where the gateway stands, and the same seller and buyer over plain TCP.
 */
import { fileURLToPath } from 'node:url';
import { startChild } from './lib.js';

const SCRIPT = fileURLToPath(new URL('./floorNode.ts', import.meta.url));

function lastJson<T>(output: string): T | undefined {
  const line = output
    .trim()
    .split('\n')
    .findLast((text) => text.startsWith('{'));
  if (line === undefined) return undefined;
  try {
    return JSON.parse(line) as T;
  } catch {
    return undefined;
  }
}

async function startRole<T>(role: string, target: string, stops: Array<() => Promise<void>>) {
  const child = await startChild(['--import', 'tsx', SCRIPT, role, target], (output) =>
    lastJson<T>(output),
  );
  stops.unshift(() => child.stop());
  return child;
}

interface Floor {
  /** The floor buyer, in front of the floor seller. */
  url: string;
  /** The bare proxy in front of the floor buyer. */
  chainUrl: string;
  /** The floor buyer over plain TCP, in front of the TCP floor seller. */
  tcpUrl: string;
  pids: Record<'floorSeller' | 'floorBuyer' | 'floorProxy' | 'tcpSeller' | 'tcpBuyer', number>;
}

export async function startFloor(
  upstreamUrl: string,
  stops: Array<() => Promise<void>>,
): Promise<Floor> {
  const seller = await startRole<{ multiaddr: string }>('seller', upstreamUrl, stops);
  const buyer = await startRole<{ url: string }>('buyer', seller.ready.multiaddr, stops);
  const proxy = await startRole<{ url: string }>('proxy', buyer.ready.url, stops);
  const tcpSeller = await startRole<{ port: number }>('tcpseller', upstreamUrl, stops);
  const tcpBuyer = await startRole<{ url: string }>(
    'tcpbuyer',
    String(tcpSeller.ready.port),
    stops,
  );
  return {
    url: buyer.ready.url,
    chainUrl: proxy.ready.url,
    tcpUrl: tcpBuyer.ready.url,
    pids: {
      floorSeller: seller.pid,
      floorBuyer: buyer.pid,
      floorProxy: proxy.pid,
      tcpSeller: tcpSeller.pid,
      tcpBuyer: tcpBuyer.pid,
    },
  };
}
