/**
 * Hostile input at the seller's libp2p ingress: broken frames and request heads only ever end
 * their own stream; well-framed requests with hostile heads and bodies get a clear error code;
 * nothing reaches the upstream API, and the seller keeps serving another buyer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SellerConfig } from '../../src/config/index.js';
import { encodeFrame, FrameType, jsonPayload } from '../../src/network/frames.js';
import {
  LibP2pTransport,
  type SellerResponse,
  type SvcNode,
  TransportError,
} from '../../src/network/index.js';
import { REQUEST_PROTOCOL } from '../../src/network/protocols.js';
import {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
  waitFor,
} from '../../src/network/testing/index.js';
import { type SellerHandle, startSeller } from '../../src/seller/startSeller.js';
import { type FakeUpstream, startFakeUpstream } from '../../src/seller/testing/fakeUpstreams.js';

const UPLOAD_LIMIT = 256 * 1024;
const encoder = new TextEncoder();
let upstream: FakeUpstream;
let seller: SellerHandle;
let buyer: SvcNode;
let transport: LibP2pTransport;
let liar: LibP2pTransport;

function config(): SellerConfig {
  return {
    displayName: 'hostile seller',
    uploadLimitBytes: UPLOAD_LIMIT,
    providers: [
      {
        type: 'openai-chat',
        name: 'openai',
        baseUrl: upstream.baseUrl,
        apiKeyEnv: 'FAKE_KEY',
        services: { 'gpt-test': { categories: [] } },
        defaultPricing: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 },
        maxConcurrency: 8,
      },
      {
        type: 'demo',
        services: { 'demo-chat': { categories: ['demo'] } },
        defaultPricing: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 },
        maxConcurrency: 8,
      },
    ],
  };
}

beforeAll(async () => {
  upstream = await startFakeUpstream({ text: 'fine', requireApiKey: undefined });
  seller = await startSeller({
    identity: randomIdentity(),
    seller: config(),
    network: loopbackNetworkConfig(),
    env: { FAKE_KEY: 'sk-x' },
  });
  buyer = await startLoopbackNode('buyer');
  const route = (uploadLimitBytes: number) => ({
    route: () => ({
      libp2pPeerId: seller.node.libp2pPeerId,
      addresses: seller.node.libp2p.getMultiaddrs(),
      uploadLimitBytes,
    }),
  });
  transport = new LibP2pTransport({ node: buyer, router: route(UPLOAD_LIMIT) });
  // A buyer that ignores the advertised upload limit.
  liar = new LibP2pTransport({ node: buyer, router: route(Number.MAX_SAFE_INTEGER) });
});

afterAll(async () => {
  await buyer?.stop();
  await seller?.stop();
  await upstream?.close();
});

async function bodyOf(response: SellerResponse): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of response.body) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function codeOf(text: string): string | undefined {
  try {
    return (JSON.parse(text) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}

/** Another buyer's ordinary request is answered. */
async function stillServing(): Promise<void> {
  const response = await transport.request(seller.node.peerId, {
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json' },
    body: encoder.encode(
      JSON.stringify({ model: 'demo-chat', messages: [{ role: 'user', content: 'still there?' }] }),
    ),
  });
  expect(response.status).toBe(200);
  expect(await bodyOf(response)).toContain('still there?');
}

async function send(
  head: { path?: string; headers?: Record<string, string> },
  body: Uint8Array,
  via = transport,
) {
  const response = await via.request(seller.node.peerId, {
    method: 'POST',
    path: head.path ?? '/v1/chat/completions',
    headers: head.headers ?? { 'content-type': 'application/json' },
    body,
  });
  const text = await bodyOf(response);
  return { status: response.status, code: codeOf(text) };
}

describe('seller wire: broken frames end only their stream', () => {
  const head = (value: unknown) => encodeFrame(FrameType.head, jsonPayload(value));
  it.each([
    ['a head that is a JSON array', head([1, 2, 3])],
    ['a head that is a number', head(42)],
    [
      'a head nested 30,000 deep',
      encodeFrame(FrameType.head, encoder.encode(`${'['.repeat(30_000)}${']'.repeat(30_000)}`)),
    ],
    ['a head of invalid UTF-8', encodeFrame(FrameType.head, Uint8Array.of(0x7b, 0xff, 0xfe, 0x7d))],
    ['a DATA frame before any head', encodeFrame(FrameType.data, encoder.encode('{}'))],
    ['a trailer frame as the head', encodeFrame(FrameType.trailer, jsonPayload({}))],
    ['a negative body length', head({ method: 'POST', path: '/x', headers: {}, bodyLength: -1 })],
    [
      'a head just over 64 KB',
      encodeFrame(FrameType.head, new Uint8Array(64 * 1024 + 1).fill(0x20)),
    ],
  ])('%s: the stream is closed and the seller keeps serving', async (_name, bytes) => {
    const upstreamCalls = upstream.requests.length;
    const stream = await buyer.libp2p.dialProtocol(
      seller.node.libp2p.getMultiaddrs(),
      REQUEST_PROTOCOL,
    );
    stream.send(bytes);
    await waitFor(
      () => stream.status !== 'open' || stream.remoteWriteStatus === 'closed',
      10_000,
      'the seller to end the stream',
    );
    expect(upstream.requests.length).toBe(upstreamCalls);
    await stillServing();
  });

  it('a trickled head holds nobody else up', async () => {
    const stream = await buyer.libp2p.dialProtocol(
      seller.node.libp2p.getMultiaddrs(),
      REQUEST_PROTOCOL,
    );
    const bytes = head({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: {},
      bodyLength: 2,
    });
    for (let i = 0; i < 20; i++) {
      stream.send(bytes.subarray(i, i + 1));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await stillServing();
    stream.abort(new Error('done trickling'));
  });
});

describe('seller wire: hostile heads and bodies get a clear code', () => {
  it.each([['a path with ../', { path: '/v1/../../etc/passwd' }, 404, 'not_found']])(
    '%s',
    async (_name, head, status, code) => {
      const upstreamCalls = upstream.requests.length;
      const body = encoder.encode(JSON.stringify({ model: 'gpt-test', messages: [] }));
      expect(await send(head, body)).toEqual({ status, code });
      expect(upstream.requests.length).toBe(upstreamCalls);
      await stillServing();
    },
  );

  it.each([
    ['a 10 KB path', `/v1/${'p'.repeat(10_240)}`],
    // A receipt frames the path with a newline (docs/decisions/168-receipts-anyone-can-check.md).
    ['a path with NUL', '/v1/chat/completions\u0000'],
    ['a path with a newline', '/v1/chat/completions\nPOST /v1/responses'],
  ])('a head with %s is refused on the wire (the stream is reset)', async (_name, path) => {
    const upstreamCalls = upstream.requests.length;
    const refused = await send({ path }, encoder.encode('{}')).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TransportError);
    expect(upstream.requests.length).toBe(upstreamCalls);
    await stillServing();
  });

  it('a head with 2,000 headers is served (they are bounded by the 64 KB head)', async () => {
    const headers = Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`x-h-${i}`, 'v']));
    const body = encoder.encode(
      JSON.stringify({ model: 'demo-chat', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(
      await send({ headers: { ...headers, 'content-type': 'application/json' } }, body),
    ).toEqual({ status: 200, code: undefined });
  });

  it.each([
    ['malformed JSON', '{"model":"gpt-test",', 400, 'invalid_json'],
    ['JSON that is not an object', '[{"model":"gpt-test"}]', 400, 'invalid_json'],
    [
      '100k-deep nesting',
      `{"model":"gpt-test","messages":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
      400,
      'invalid_request',
    ],
    [
      '100k-deep nesting to the demo provider',
      `{"model":"demo-chat","messages":[{"role":"user","content":${'['.repeat(100_000)}${']'.repeat(100_000)}}]}`,
      400,
      'invalid_request',
    ],
    [
      'a model name with ../',
      '{"model":"../../gpt-test","messages":[]}',
      404,
      'service_not_offered',
    ],
    [
      'a model name with NUL',
      '{"model":"gpt-test\\u0000","messages":[]}',
      404,
      'service_not_offered',
    ],
    [
      'a 10 KB model name',
      `{"model":"${'m'.repeat(10_240)}","messages":[]}`,
      404,
      'service_not_offered',
    ],
  ])('a body of %s', async (_name, body, status, code) => {
    const upstreamCalls = upstream.requests.length;
    const result = await send({}, encoder.encode(body));
    expect(result.code).toBe(code);
    expect(result.status).toBe(status);
    expect(upstream.requests.length).toBe(upstreamCalls);
    await stillServing();
  });

  it('a body that is not UTF-8 is 400 invalid_json', async () => {
    const upstreamCalls = upstream.requests.length;
    const body = Buffer.concat([
      Buffer.from('{"model":"gpt-test","messages":[{"role":"user","content":"'),
      Buffer.from([0xff, 0xc3, 0x28]),
      Buffer.from('"}]}'),
    ]);
    expect(await send({}, body)).toEqual({ status: 400, code: 'invalid_json' });
    expect(upstream.requests.length).toBe(upstreamCalls);
  });

  it('a megabyte of whitespace-free text to the demo provider is counted and answered', async () => {
    const big = `{"model":"demo-chat","messages":[{"role":"user","content":"${'x'.repeat(200_000)}"}]}`;
    const result = await send({}, encoder.encode(big));
    expect(result.status).toBe(200);
    await stillServing();
  });

  it('a body one byte over the upload limit is 413 upload_body_too_large, before or after sending', async () => {
    const over = encoder.encode(`{"model":"gpt-test","x":"${'a'.repeat(UPLOAD_LIMIT - 26)}"}`);
    expect(over.byteLength).toBe(UPLOAD_LIMIT + 1);
    const refused = await transport
      .request(seller.node.peerId, {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json' },
        body: over,
      })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TransportError);
    expect(refused).toMatchObject({ failure: 'too_large' });
    expect(await send({}, over, liar)).toEqual({ status: 413, code: 'upload_body_too_large' });
    await stillServing();
  });
});
