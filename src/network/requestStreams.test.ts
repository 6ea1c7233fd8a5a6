/**
 * `/svc/request/2` between real loopback nodes (decision 190): requests one after another on
 * kept streams, cancels and slow readers that touch only their own request, sellers that only
 * serve `/svc/request/1`, hostile bytes on a kept stream, and streams the seller ends.
 */
import type { Stream } from '@libp2p/interface';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeFrame, FrameReader, FrameType, jsonPayload } from './frames.js';
import type { SvcNode } from './node.js';
import { REQUEST_PROTOCOL, REQUEST_STREAMS_PROTOCOL } from './protocols.js';
import { type OutboundReply, type RequestServerOptions, serveRequests } from './requestServer.js';
import { frameLimit } from './requestWire.js';
import { startLoopbackNode, type TestIdentity, waitFor } from './testing/loopback.js';
import { readAll, textRequest } from './testing/requests.js';
import { LibP2pTransport, type LibP2pTransportOptions } from './transport.js';

type Node = SvcNode & { identity: TestIdentity };
const text = new TextEncoder();
const LIMIT = 256 * 1024;
const BIG = new Uint8Array(4 * 1024 * 1024).fill(97);

function post(path: string, body = '', signal?: AbortSignal) {
  return textRequest(path, body, { signal });
}

/** The open streams of `protocol` between `from` and `to`, as `from` sees them. */
function streamsOf(from: SvcNode, to: SvcNode, protocol = REQUEST_STREAMS_PROTOCOL): Stream[] {
  return from.libp2p
    .getConnections(to.libp2pPeerId)
    .flatMap((connection) => connection.streams)
    .filter((stream) => stream.protocol === protocol && stream.status === 'open');
}

/** What the seller saw: the paths asked, and the requests cancelled. */
interface Seen {
  paths: string[];
  cancelled: string[];
}

function handler(seen: Seen) {
  return async (req: { path: string; body: Uint8Array; signal: AbortSignal }) => {
    seen.paths.push(req.path);
    req.signal.addEventListener('abort', () => seen.cancelled.push(req.path));
    if (req.path === '/forever') {
      return {
        status: 200,
        headers: {},
        body: (async function* () {
          while (!req.signal.aborted) {
            yield text.encode('tick\n');
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
        })(),
      } satisfies OutboundReply;
    }
    if (req.path === '/big') return { status: 200, headers: {}, body: BIG } satisfies OutboundReply;
    return {
      status: 200,
      headers: {},
      body: (async function* () {
        yield text.encode('echo:');
        yield req.body;
      })(),
      trailer: () => ({ costMicroUsd: '7' }),
    } satisfies OutboundReply;
  };
}

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** A seller serving `server` options and a buyer's transport to it. */
async function pair(
  server: Partial<RequestServerOptions> = {},
  client: Partial<LibP2pTransportOptions> = {},
) {
  const seller = await startLoopbackNode('seller');
  stops.push(() => seller.stop());
  const buyer = await startLoopbackNode('buyer');
  stops.push(() => buyer.stop());
  const seen: Seen = { paths: [], cancelled: [] };
  const served = await serveRequests(seller, handler(seen), {
    uploadLimitBytes: () => LIMIT,
    ...server,
  });
  stops.push(() => served.stop());
  const addresses = seller.libp2p.getMultiaddrs();
  const transport = new LibP2pTransport({
    node: buyer,
    router: {
      route: () => ({ libp2pPeerId: seller.libp2pPeerId, addresses, uploadLimitBytes: LIMIT }),
    },
    ...client,
  });
  const send = (path: string, body = '', signal?: AbortSignal) =>
    transport.request(seller.peerId, post(path, body, signal));
  return { seller: seller as Node, buyer: buyer as Node, seen, send };
}

describe('/svc/request/2', () => {
  it('carries many requests on one kept stream, and as many streams as requests in flight', async () => {
    const { seller, buyer, seen, send } = await pair();
    for (let i = 0; i < 25; i++) {
      const response = await send('/echo', `n${i}`);
      expect(await readAll(response)).toBe(`echo:n${i}`);
      expect(await response.trailer).toEqual({ costMicroUsd: '7' });
      expect(streamsOf(buyer, seller)).toHaveLength(1);
    }
    expect(streamsOf(seller, buyer)).toHaveLength(1);
    expect(streamsOf(buyer, seller, REQUEST_PROTOCOL)).toHaveLength(0);
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) => send('/echo', `r${round}.${i}`).then(readAll)),
      );
      expect(answers).toEqual(Array.from({ length: 6 }, (_, i) => `echo:r${round}.${i}`));
    }
    expect(streamsOf(buyer, seller).length).toBeLessThanOrEqual(6);
    expect(seen.paths).toHaveLength(25 + 18);
    expect(seen.cancelled).toEqual([]);
  });

  it('a cancel mid-answer resets only its own stream: a concurrent request ends whole, the next works', async () => {
    const { seller, buyer, seen, send } = await pair();
    await readAll(await send('/echo', 'warm'));
    const controller = new AbortController();
    const cancelled = await send('/forever', '', controller.signal);
    const other = await send('/big');
    const iterator = cancelled.body[Symbol.asyncIterator]();
    expect(Buffer.from((await iterator.next()).value as Uint8Array).toString()).toBe('tick\n');
    controller.abort();
    // Chunks already received may still be delivered; then the cancel.
    const error = await (async () => {
      while (!(await iterator.next()).done);
    })().catch((e: unknown) => e);
    expect(error).toMatchObject({ failure: 'cancelled', beforeHead: false });
    expect(await cancelled.trailer).toBeUndefined();
    expect((await readAll(other)).length).toBe(BIG.byteLength);
    await waitFor(
      () => seen.cancelled.includes('/forever'),
      10_000,
      'the seller to see the cancel',
    );
    expect(await readAll(await send('/echo', 'after'))).toBe('echo:after');
    expect(seen.cancelled).toEqual(['/forever']);
    // The cancelled request's stream was reset, never kept.
    expect(streamsOf(buyer, seller).length).toBeLessThanOrEqual(2);
  });

  it('a reader that does not read holds back only its own answer', async () => {
    const { send } = await pair();
    const slow = await send('/big');
    // Far more than a stream's window waits unread on the slow one while others complete.
    for (let i = 0; i < 5; i++)
      expect(await readAll(await send('/echo', `${i}`))).toBe(`echo:${i}`);
    expect((await readAll(slow)).length).toBe(BIG.byteLength);
    expect(await readAll(await send('/echo', 'then'))).toBe('echo:then');
  });

  it('a seller that serves only /svc/request/1 is still served, on /1 from the first refusal on', async () => {
    const { seller, buyer, seen, send } = await pair({ streams: false });
    for (let i = 0; i < 3; i++)
      expect(await readAll(await send('/echo', `${i}`))).toBe(`echo:${i}`);
    expect(seen.paths).toEqual(['/echo', '/echo', '/echo']);
    expect(streamsOf(buyer, seller)).toHaveLength(0);
  });

  it('a buyer without kept streams speaks /svc/request/1 to a seller that serves both', async () => {
    const { seller, buyer, send } = await pair({}, { streams: false });
    expect(await readAll(await send('/echo', 'one'))).toBe('echo:one');
    expect(streamsOf(buyer, seller)).toHaveLength(0);
  });

  it('ends streams idle too long; the next request opens a new one', async () => {
    const { seller, buyer, send } = await pair({ streams: { idleMs: 300 } });
    expect(await readAll(await send('/echo', 'one'))).toBe('echo:one');
    await waitFor(() => streamsOf(buyer, seller).length === 0, 10_000, 'the idle stream to end');
    expect(await readAll(await send('/echo', 'two'))).toBe('echo:two');
    expect(streamsOf(buyer, seller)).toHaveLength(1);
  });

  it('a request written to a kept stream the seller has just ended goes again on a new one', async () => {
    const { seller, buyer, seen, send } = await pair();
    expect(await readAll(await send('/echo', 'one'))).toBe('echo:one');
    const [sellerSide] = streamsOf(seller, buyer);
    const [buyerSide] = streamsOf(buyer, seller);
    // The reset is still on its way when the buyer writes its next request on the stream.
    sellerSide!.abort(new Error('seller ended the stream'));
    const response = await send('/echo', 'two');
    expect(await readAll(response)).toBe('echo:two');
    expect(seen.paths).toEqual(['/echo', '/echo']);
    expect(buyerSide!.status).not.toBe('open');
  });

  it('forgets kept streams whose connection closed; the next request dials again', async () => {
    const { seller, buyer, send } = await pair();
    expect(await readAll(await send('/echo', 'one'))).toBe('echo:one');
    const [kept] = streamsOf(buyer, seller);
    await buyer.libp2p.hangUp(seller.libp2pPeerId);
    expect(kept!.status).not.toBe('open');
    expect(await readAll(await send('/echo', 'two'))).toBe('echo:two');
    expect(streamsOf(buyer, seller)).toHaveLength(1);
  });

  it('bounds the requests one stream carries and the idle streams of a connection', async () => {
    const { seller, buyer, send } = await pair({
      streams: { maxRequests: 2, maxIdlePerConnection: 1 },
    });
    for (let i = 0; i < 5; i++)
      expect(await readAll(await send('/echo', `${i}`))).toBe(`echo:${i}`);
    const answers = await Promise.all([0, 1, 2, 3].map((i) => send('/echo', `${i}`).then(readAll)));
    expect(answers).toEqual(['echo:0', 'echo:1', 'echo:2', 'echo:3']);
    await waitFor(
      () => streamsOf(seller, buyer).length <= 1,
      10_000,
      'extra idle streams to close',
    );
    expect(await readAll(await send('/echo', 'last'))).toBe('echo:last');
  });

  it.each([
    ['garbage bytes', text.encode('GET / HTTP/1.1\r\n\r\n')],
    ['an oversized head', encodeFrame(FrameType.head, new Uint8Array(70 * 1024))],
    ['an unknown frame type', Uint8Array.of(9, 0, 0, 0, 1, 0)],
    ['a head that is not JSON', encodeFrame(FrameType.head, text.encode('{nope'))],
    ['a huge length prefix', Uint8Array.of(2, 0xff, 0xff, 0xff, 0xff)],
  ])(
    'a kept stream that then sends %s is reset, and the seller keeps serving',
    async (_name, bytes) => {
      const { seller, send } = await pair();
      const client = await startLoopbackNode('buyer');
      stops.push(() => client.stop());
      const stream = await client.libp2p.dialProtocol(
        seller.libp2p.getMultiaddrs(),
        REQUEST_STREAMS_PROTOCOL,
      );
      const reader = new FrameReader(stream);
      const head = jsonPayload({ method: 'POST', path: '/echo', headers: {}, bodyLength: 2 });
      for (const round of ['a1', 'a2']) {
        stream.send(
          Buffer.concat([
            encodeFrame(FrameType.head, head),
            encodeFrame(FrameType.data, text.encode(round)),
            encodeFrame(FrameType.end, new Uint8Array(0)),
          ]),
        );
        const types: number[] = [];
        for (;;) {
          const frame = await reader.read(frameLimit, AbortSignal.timeout(10_000));
          types.push(frame!.type);
          if (frame!.type === FrameType.trailer) break;
        }
        expect(types).toEqual([FrameType.head, FrameType.data, FrameType.data, FrameType.trailer]);
      }
      stream.send(bytes);
      await waitFor(() => stream.status !== 'open', 10_000, 'the seller to reset the stream');
      expect(await readAll(await send('/echo', 'still here'))).toBe('echo:still here');
    },
  );
});
