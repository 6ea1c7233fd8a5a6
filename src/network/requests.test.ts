import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFrame, FrameType, jsonPayload } from './frames.js';
import { peerIdFromLibp2p } from './keys.js';
import type { SvcNode } from './node.js';
import { REQUEST_PROTOCOL } from './protocols.js';
import {
  type InboundRequest,
  type OutboundReply,
  type RequestServer,
  serveRequests,
} from './requestServer.js';
import { startLoopbackNode, type TestIdentity, waitFor } from './testing/loopback.js';
import { readAll, textRequest } from './testing/requests.js';
import { LibP2pTransport } from './transport.js';
import { TransportError } from './types.js';

type Node = SvcNode & { identity: TestIdentity };
const text = new TextEncoder();
const UPLOAD_LIMIT = 256 * 1024;

function request(path: string, body = '', signal?: AbortSignal) {
  return textRequest(path, body, { signal, headers: { 'content-type': 'text/plain' } });
}

describe('request streams', () => {
  let seller: Node;
  let buyer: Node;
  let server: RequestServer;
  let transport: LibP2pTransport;
  const seen: InboundRequest[] = [];
  let cancelled = 0;

  beforeAll(async () => {
    seller = await startLoopbackNode('seller');
    buyer = await startLoopbackNode('buyer');
    server = await serveRequests(
      seller,
      async (req): Promise<OutboundReply> => {
        seen.push(req);
        if (req.path === '/echo') {
          return {
            status: 200,
            headers: { 'x-echo': req.headers['content-type'] ?? '' },
            body: (async function* () {
              for (let i = 0; i < 3; i++) yield text.encode(`chunk${i}:`);
              yield req.body;
            })(),
            trailer: () => ({
              usage: { inputTokens: 3, cachedInputTokens: 1, outputTokens: 4 },
              costMicroUsd: '12',
            }),
          };
        }
        if (req.path === '/big') {
          const block = new Uint8Array(1024 * 1024).fill(97);
          return {
            status: 200,
            headers: {},
            body: (async function* () {
              for (let i = 0; i < 8; i++) yield block;
            })(),
          };
        }
        if (req.path === '/forever') {
          req.signal.addEventListener('abort', () => cancelled++);
          return {
            status: 200,
            headers: {},
            body: (async function* () {
              while (!req.signal.aborted) {
                yield text.encode('tick\n');
                await new Promise((resolve) => setTimeout(resolve, 20));
              }
            })(),
          };
        }
        if (req.path === '/stall') {
          req.signal.addEventListener('abort', () => cancelled++);
          return {
            status: 200,
            headers: {},
            body: (async function* () {
              yield text.encode('first');
              // Then nothing, without closing: a seller hung mid-answer.
              await new Promise((resolve) => req.signal.addEventListener('abort', resolve));
            })(),
          };
        }
        if (req.path === '/silent') {
          await new Promise((resolve) => req.signal.addEventListener('abort', resolve));
          return { status: 500, headers: {} };
        }
        if (req.path === '/broken') {
          return {
            status: 200,
            headers: {},
            body: (async function* () {
              yield text.encode('partial');
              throw new Error('upstream broke');
            })(),
            trailer: (error) => ({ error: `upstream_error: ${error?.message}` }),
          };
        }
        return { status: 404, headers: {}, body: text.encode('no') };
      },
      { uploadLimitBytes: () => UPLOAD_LIMIT },
    );
    const sellerAddrs = seller.libp2p.getMultiaddrs();
    transport = new LibP2pTransport({
      node: buyer,
      router: {
        route: (peerId) =>
          peerId === seller.peerId
            ? {
                libp2pPeerId: seller.libp2pPeerId,
                addresses: sellerAddrs,
                uploadLimitBytes: UPLOAD_LIMIT,
              }
            : undefined,
      },
    });
  });

  afterAll(async () => {
    await server?.stop();
    await buyer?.stop();
    await seller?.stop();
  });

  it('gives up on a seller that stops sending mid-answer, not on a client slow to read', async () => {
    const impatient = new LibP2pTransport({
      node: buyer,
      router: {
        route: () => ({
          libp2pPeerId: seller.libp2pPeerId,
          addresses: seller.libp2p.getMultiaddrs(),
          uploadLimitBytes: UPLOAD_LIMIT,
        }),
      },
      idleTimeoutMs: 300,
    });
    const slowReader = await impatient.request(seller.peerId, request('/echo', 'late'));
    const chunks = slowReader.body[Symbol.asyncIterator]();
    expect(Buffer.from((await chunks.next()).value as Uint8Array).toString('utf8')).toBe('chunk0:');
    await new Promise((resolve) => setTimeout(resolve, 700));
    let rest = '';
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) {
      rest += Buffer.from(next.value).toString('utf8');
    }
    expect(rest).toBe('chunk1:chunk2:late');

    const before = cancelled;
    const hung = await impatient.request(seller.peerId, request('/stall'));
    const error = await readAll(hung).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ failure: 'timeout', beforeHead: false });
    expect(String(error)).toContain('no bytes from the seller for 0.3 s');
    expect(await hung.trailer).toBeUndefined();
    // The seller was told: its handler's signal aborted when the buyer reset the stream.
    await waitFor(() => cancelled > before, 5_000, 'the seller saw the reset');
  });

  it('carries head, streamed body and trailer, and proves the buyer identity', async () => {
    const response = await transport.request(seller.peerId, request('/echo', 'hello'));
    expect(response.status).toBe(200);
    expect(response.headers['x-echo']).toBe('text/plain');
    expect(await readAll(response)).toBe('chunk0:chunk1:chunk2:hello');
    expect(await response.trailer).toEqual({
      usage: { inputTokens: 3, cachedInputTokens: 1, outputTokens: 4 },
      costMicroUsd: '12',
    });
    expect(seen.at(-1)?.peerId).toBe(buyer.peerId);
    expect(peerIdFromLibp2p(buyer.libp2pPeerId)).toBe(buyer.peerId);
  });

  it('moves several megabytes intact', async () => {
    const response = await transport.request(seller.peerId, request('/big', 'x'.repeat(200_000)));
    let total = 0;
    for await (const chunk of response.body) total += chunk.byteLength;
    expect(total).toBe(8 * 1024 * 1024);
    expect(await response.trailer).toEqual({});
    expect(seen.at(-1)?.body.byteLength).toBe(200_000);
  });

  it('refuses a body over the upload limit before sending it', async () => {
    const error = await transport
      .request(seller.peerId, request('/echo', 'x'.repeat(UPLOAD_LIMIT + 1)))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ failure: 'too_large', beforeHead: true });
  });

  it('answers 413 when a buyer sends more than the limit anyway', async () => {
    const liar = new LibP2pTransport({
      node: buyer,
      router: {
        route: () => ({
          libp2pPeerId: seller.libp2pPeerId,
          addresses: [],
          uploadLimitBytes: Number.MAX_SAFE_INTEGER,
        }),
      },
    });
    const response = await liar.request(
      seller.peerId,
      request('/echo', 'x'.repeat(UPLOAD_LIMIT + 1)),
    );
    expect(response.status).toBe(413);
    expect(await readAll(response)).toContain('upload_body_too_large');
  });

  it('reaches the seller handler when the buyer cancels mid-stream', async () => {
    const controller = new AbortController();
    const response = await transport.request(
      seller.peerId,
      request('/forever', '', controller.signal),
    );
    const iterator = response.body[Symbol.asyncIterator]();
    await iterator.next();
    controller.abort();
    const error = await (async () => {
      for (;;) {
        const next = await iterator.next();
        if (next.done) return undefined;
      }
    })().catch((e: unknown) => e);
    expect(error).toMatchObject({ failure: 'cancelled', beforeHead: false });
    await waitFor(() => cancelled >= 1, 10_000, 'seller to see the cancel');
    expect(await response.trailer).toBeUndefined();
  });

  it('cancels when the consumer stops reading early', async () => {
    const before = cancelled;
    const response = await transport.request(seller.peerId, request('/forever'));
    for await (const _chunk of response.body) break;
    await waitFor(() => cancelled > before, 10_000, 'seller to see the early stop');
  });

  it('times out before the head with beforeHead true', async () => {
    const error = await transport
      .request(seller.peerId, { ...request('/silent'), headTimeoutMs: 300 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ failure: 'timeout', beforeHead: true });
  });

  it('ends a broken upstream body with an error trailer', async () => {
    const response = await transport.request(seller.peerId, request('/broken'));
    expect(await readAll(response)).toBe('partial');
    expect(await response.trailer).toEqual({ error: 'upstream_error: upstream broke' });
  });

  it('fails fast for an unknown peer', async () => {
    const error = await transport
      .request('00'.repeat(20), request('/echo'))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ failure: 'unreachable', beforeHead: true });
  });

  it.each([
    ['garbage bytes', text.encode('GET / HTTP/1.1\r\n\r\n')],
    ['an oversized head', encodeFrame(FrameType.head, new Uint8Array(70 * 1024))],
    ['an unknown frame type', Uint8Array.of(9, 0, 0, 0, 1, 0)],
    ['a head that is not JSON', encodeFrame(FrameType.head, text.encode('{nope'))],
    [
      'a body longer than declared',
      Buffer.concat([
        encodeFrame(
          FrameType.head,
          jsonPayload({ method: 'POST', path: '/echo', headers: {}, bodyLength: 1 }),
        ),
        encodeFrame(FrameType.data, text.encode('too long')),
      ]),
    ],
    ['a huge length prefix', Uint8Array.of(2, 0xff, 0xff, 0xff, 0xff)],
  ])('closes a stream that sends %s and keeps serving', async (_name, bytes) => {
    const stream = await buyer.libp2p.dialProtocol(seller.libp2pPeerId, REQUEST_PROTOCOL);
    stream.send(bytes);
    await waitFor(
      () => stream.status !== 'open' || stream.remoteWriteStatus === 'closed',
      10_000,
      'stream close',
    );
    const response = await transport.request(seller.peerId, request('/echo', 'still here'));
    expect(await readAll(response)).toContain('still here');
  });
});

describe('seller dying mid-stream', () => {
  it('gives the buyer a clean reset error, not a hang', async () => {
    const seller = await startLoopbackNode('seller');
    const buyer = await startLoopbackNode('buyer');
    try {
      await serveRequests(
        seller,
        async () => ({
          status: 200,
          headers: {},
          body: (async function* () {
            for (;;) {
              yield text.encode('data\n');
              await new Promise((resolve) => setTimeout(resolve, 10));
            }
          })(),
        }),
        { uploadLimitBytes: () => 1024 },
      );
      const addrs = seller.libp2p.getMultiaddrs();
      const transport = new LibP2pTransport({
        node: buyer,
        router: {
          route: () => ({
            libp2pPeerId: seller.libp2pPeerId,
            addresses: addrs,
            uploadLimitBytes: 1024,
          }),
        },
      });
      const response = await transport.request(seller.peerId, request('/x'));
      let chunks = 0;
      const error = await (async () => {
        for await (const _chunk of response.body) {
          chunks++;
          if (chunks === 3) void seller.stop();
        }
      })().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TransportError);
      expect(error).toMatchObject({ failure: 'reset', beforeHead: false });
      expect(await response.trailer).toBeUndefined();
    } finally {
      await buyer.stop();
      await seller.stop();
    }
  });
});

describe('a peer that does not serve requests', () => {
  it('is unreachable before the head, and the router hears about it', async () => {
    const other = await startLoopbackNode('seller');
    const buyer = await startLoopbackNode('buyer');
    try {
      const marked: string[] = [];
      const addrs = other.libp2p.getMultiaddrs();
      const transport = new LibP2pTransport({
        node: buyer,
        router: {
          route: () => ({
            libp2pPeerId: other.libp2pPeerId,
            addresses: addrs,
            uploadLimitBytes: 1024 * 1024,
          }),
          markUnreachable: (peerId) => marked.push(peerId),
        },
      });
      for (const body of ['small', 'x'.repeat(100_000)]) {
        const error = await transport
          .request(other.peerId, request('/echo', body))
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(TransportError);
        expect(error).toMatchObject({ failure: 'unreachable', beforeHead: true });
      }
      expect(marked).toEqual([other.peerId, other.peerId]);
    } finally {
      await buyer.stop();
      await other.stop();
    }
  });
});
