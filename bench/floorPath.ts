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

async function startRole<T>(
  role: string,
  target: string,
  stops: Array<() => Promise<void>>,
  modules: string,
) {
  const child = await startChild(
    ['--import', 'tsx', SCRIPT, role, target],
    (output) => lastJson<T>(output),
    { env: { ...process.env, BENCH_SVC_MODULES: modules } },
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

/** `modules`: the folder svc's modules load from, `dist/` or `src/` (bench/installed.ts). */
export async function startFloor(
  upstreamUrl: string,
  stops: Array<() => Promise<void>>,
  modules: string,
): Promise<Floor> {
  const role = <T>(name: string, target: string) => startRole<T>(name, target, stops, modules);
  const seller = await role<{ multiaddr: string }>('seller', upstreamUrl);
  const buyer = await role<{ url: string }>('buyer', seller.ready.multiaddr);
  const proxy = await role<{ url: string }>('proxy', buyer.ready.url);
  const tcpSeller = await role<{ port: number }>('tcpseller', upstreamUrl);
  const tcpBuyer = await role<{ url: string }>('tcpbuyer', String(tcpSeller.ready.port));
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
