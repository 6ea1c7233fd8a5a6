/**
 * `/svc/request/1` against `/svc/request/2` (docs/decisions/190-requests-on-kept-streams.md):
 * a loopback seller and buyer in this one process, the seller answering a 1 KB body at once, the
 * buyer sending 2 KB requests through `LibP2pTransport`, one at a time and 32 at a time. The two
 * protocols alternate round by round in the same run, so the machine's load touches both alike.
 * Figures: CPU µs per request of buyer and seller together (the process's user + system time),
 * and wall µs per request.
 */
import { LibP2pTransport, serveRequests } from '../src/network/index.js';
import { startLoopbackNode } from '../src/network/testing/loopback.js';
import { printFigure } from './lib.js';

const REQUESTS = Number(process.env.BENCH_STREAMS_REQUESTS ?? 5000);
const ROUNDS = Number(process.env.BENCH_STREAMS_ROUNDS ?? 3);
const LIMIT = 1024 * 1024;
const text = new TextEncoder();
const BODY = text.encode('q'.repeat(2000));
const ANSWER = text.encode('a'.repeat(1000));

/** CPU and wall µs per request over REQUESTS requests, `concurrency` at a time. */
async function measure(streams: boolean, concurrency: number) {
  const seller = await startLoopbackNode('seller');
  const buyer = await startLoopbackNode('buyer');
  try {
    await serveRequests(seller, async () => ({ status: 200, headers: {}, body: ANSWER }), {
      uploadLimitBytes: () => LIMIT,
      streams,
    });
    const addresses = seller.libp2p.getMultiaddrs();
    const transport = new LibP2pTransport({
      node: buyer,
      streams,
      router: {
        route: () => ({ libp2pPeerId: seller.libp2pPeerId, addresses, uploadLimitBytes: LIMIT }),
      },
    });
    const one = async () => {
      const response = await transport.request(seller.peerId, {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: {},
        body: BODY,
      });
      for await (const _chunk of response.body);
      await response.trailer;
    };
    for (let i = 0; i < 500; i++) await one();
    let left = REQUESTS;
    const cpu = process.cpuUsage();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (left-- > 0) await one();
      }),
    );
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    return {
      cpuMicros: Math.round((used.user + used.system) / REQUESTS),
      wallMicros: Math.round((wallMs * 1000) / REQUESTS),
    };
  } finally {
    await buyer.stop();
    await seller.stop();
  }
}

export default async function streamsBench(): Promise<Record<string, unknown>> {
  const results: Record<string, unknown>[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const concurrency of [1, 32]) {
      for (const [name, streams] of [
        ['/svc/request/1', false],
        ['/svc/request/2', true],
      ] as const) {
        const figures = await measure(streams, concurrency);
        printFigure(`${name} at ${concurrency}: CPU per request`, figures.cpuMicros, 'µs');
        printFigure(`${name} at ${concurrency}: wall per request`, figures.wallMicros, 'µs');
        results.push({ round, protocol: name, concurrency, ...figures });
      }
    }
  }
  return { requests: REQUESTS, results };
}
