/**
 * Receipts on real `/svc/request/1` streams, and on kept `/svc/request/2` ones that carry one
 * request after another, between two loopback nodes: the seller's request
 * server hashes what it received and sent and signs; the buyer's transport hashes what it sent
 * and received. The two agree on every kind of answer, and the receipt verifies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SvcNode } from './node.js';
import { requestHash, responseHash } from './receiptHashes.js';
import { receiptIssuer, verifyReceipt } from './receipts.js';
import { type OutboundReply, type RequestServer, serveRequests } from './requestServer.js';
import { startLoopbackNode, type TestIdentity } from './testing/loopback.js';
import { LibP2pTransport } from './transport.js';
import type { SellerResponse } from './types.js';

type Node = SvcNode & { identity: TestIdentity };
const text = new TextEncoder();
const LIMIT = 4 * 1024 * 1024;
const BIG = new Uint8Array(200 * 1024).fill(98);
const TERMS = {
  serviceId: 'gpt-paid',
  price: { inputMicroPerMillion: 3_000_000n, outputMicroPerMillion: 20_000_000n },
};

async function readAll(response: SellerResponse): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of response.body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** `/slow` answers after a wait, as a seller waits on its upstream (its request hash is made meanwhile). */
async function replyAfter(path: string, body: Uint8Array): Promise<OutboundReply> {
  if (path !== '/slow') return replyFor(path, body);
  await new Promise((resolve) => setTimeout(resolve, 20));
  return replyFor('/whole', body);
}

function replyFor(path: string, body: Uint8Array): OutboundReply {
  const claims = () => ({
    usage: { inputTokens: 3, cachedInputTokens: 0, outputTokens: 4 },
    costMicroUsd: '89',
  });
  if (path === '/whole')
    return {
      status: 200,
      headers: {},
      body: text.encode('{"ok":true}'),
      trailer: claims,
      terms: TERMS,
    };
  if (path === '/big')
    return { status: 200, headers: {}, body: BIG, trailer: claims, terms: TERMS };
  if (path === '/stream') {
    return {
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: (async function* () {
        for (let i = 0; i < 5; i++) yield text.encode(`data: ${i}\n\n`);
        yield body;
      })(),
      trailer: claims,
      terms: TERMS,
    };
  }
  if (path === '/broken') {
    return {
      status: 200,
      headers: {},
      body: (async function* () {
        yield text.encode('partial');
        throw new Error('upstream broke');
      })(),
    };
  }
  return { status: 404, headers: {}, body: text.encode('no such path') };
}

describe.each([
  ['/svc/request/2', true],
  ['/svc/request/1', false],
])('receipts on %s (decision 168)', (protocol, streams) => {
  let seller: Node;
  let buyer: Node;
  let servers: RequestServer[] = [];
  let transport: LibP2pTransport;
  let tunnel: LibP2pTransport;

  beforeAll(async () => {
    seller = await startLoopbackNode('seller');
    buyer = await startLoopbackNode('buyer');
    const handler = (req: { path: string; body: Uint8Array }) => replyAfter(req.path, req.body);
    servers = [
      await serveRequests(seller, handler, {
        uploadLimitBytes: () => LIMIT,
        receipts: receiptIssuer(seller.identity.privateKey),
      }),
      // The gateway tunnel reuses the framing on another protocol, without receipts.
      await serveRequests(seller, handler, { uploadLimitBytes: () => LIMIT, protocol: '/t/1' }),
    ];
    const router = {
      route: () => ({
        libp2pPeerId: seller.libp2pPeerId,
        addresses: seller.libp2p.getMultiaddrs(),
        uploadLimitBytes: LIMIT,
      }),
    };
    transport = new LibP2pTransport({ node: buyer, router, streams });
    tunnel = new LibP2pTransport({ node: buyer, router, protocol: '/t/1' });
  });

  afterAll(async () => {
    for (const server of servers) await server.stop();
    await buyer?.stop();
    await seller?.stop();
  });

  const send = (path: string, body = 'question', keepResponseBytes?: number) =>
    transport.request(seller.peerId, {
      method: 'POST',
      path,
      headers: {},
      body: text.encode(body),
      ...(keepResponseBytes !== undefined ? { keepResponseBytes } : {}),
    });

  it.each([
    ['/whole', 200],
    ['/slow', 200],
    ['/big', 200],
    ['/stream', 200],
    ['/broken', 200],
    ['/nowhere', 404],
  ])('%s: the receipt covers exactly what the buyer sent and received', async (path, status) => {
    const response = await send(path, 'a question with bytes');
    expect(response.exchange?.()).toBeUndefined();
    const received = await readAll(response);
    const trailer = await response.trailer;
    const exchange = response.exchange!()!;
    expect(exchange.buyerPeerId).toBe(buyer.peerId);
    expect(exchange.requestHash).toBe(
      requestHash('POST', path, text.encode('a question with bytes')),
    );
    expect(exchange.responseHash).toBe(responseHash(status, received));
    expect(exchange.responseBody).toBeUndefined();
    const check = verifyReceipt(trailer?.receipt, {
      seller: seller.peerId,
      buyer: buyer.peerId,
      requestHash: exchange.requestHash,
      responseHash: exchange.responseHash,
      claims: trailer!,
    });
    expect(check).toMatchObject({ ok: true });
    if (path === '/broken') expect(trailer?.error).toBe('upstream broke');
    // One request after another: on `/2` they all went on one kept stream.
    const used = buyer.libp2p
      .getConnections(seller.libp2pPeerId)
      .flatMap((connection) => connection.streams)
      .filter((stream) => stream.protocol === protocol);
    expect(used).toHaveLength(streams ? 1 : 0);
    // Replies without terms (no route, as a 404) name no service; no claim is a claim of zero.
    const named = path === '/nowhere' || path === '/broken' ? '' : 'gpt-paid';
    const cost = path === '/nowhere' || path === '/broken' ? '0' : '89';
    expect(trailer?.receipt).toMatchObject({ serviceId: named, costMicroUsd: cost });
  });

  it('keeps the response body when asked, within the bound asked for', async () => {
    const kept = await send('/stream', 'keep me', 1024);
    const received = await readAll(kept);
    await kept.trailer;
    expect(Buffer.from(kept.exchange!()!.responseBody!)).toEqual(received);
    const tooBig = await send('/big', 'keep me', 1024);
    await readAll(tooBig);
    await tooBig.trailer;
    expect(tooBig.exchange!()!.responseBody).toBeUndefined();
    expect(tooBig.exchange!()!.responseHash).toBe(responseHash(200, BIG));
  });

  it('a body cut before its trailer has no exchange; other protocols carry no receipt', async () => {
    const controller = new AbortController();
    const cut = await transport.request(seller.peerId, {
      method: 'POST',
      path: '/big',
      headers: {},
      body: text.encode('x'),
      signal: controller.signal,
    });
    for await (const _chunk of cut.body) break;
    expect(await cut.trailer).toBeUndefined();
    expect(cut.exchange!()).toBeUndefined();

    const other = await tunnel.request(seller.peerId, {
      method: 'POST',
      path: '/whole',
      headers: {},
      body: text.encode('x'),
    });
    await readAll(other);
    expect((await other.trailer)?.receipt).toBeUndefined();
    expect(other.exchange).toBeUndefined();
  });
});
