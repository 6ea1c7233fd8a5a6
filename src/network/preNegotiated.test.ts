import type { Stream } from '@libp2p/interface';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFrame, FrameType, jsonPayload } from './frames.js';
import type { SvcNode } from './node.js';
import { REQUEST_PROTOCOL } from './protocols.js';
import { type RequestServer, serveRequests } from './requestServer.js';
import { openRequestStream, requestConnection } from './requestStream.js';
import { startLoopbackNode, waitFor } from './testing/loopback.js';

const text = new TextEncoder();

/** The stream's received chunks, as the 'message' events delivered them. */
function deliveries(stream: Stream): Buffer[] {
  const chunks: Buffer[] = [];
  stream.addEventListener('message', (event) => {
    chunks.push(Buffer.from(event.data instanceof Uint8Array ? event.data : event.data.subarray()));
  });
  return chunks;
}

const until = (check: () => boolean) => waitFor(check, 5000);

/** Resolves once `stream` is closed, reset or aborted. */
function closeOf(stream: Stream): Promise<string> {
  return new Promise((resolve) => {
    if (stream.status !== 'open') resolve(stream.status);
    stream.addEventListener('close', () => resolve(stream.status));
  });
}

describe('request streams opened with their proposal', () => {
  let seller: SvcNode;
  let buyer: SvcNode;
  let server: RequestServer;
  const plain = '/svc/test-plain/1';
  const handled: string[] = [];

  beforeAll(async () => {
    seller = await startLoopbackNode('seller');
    buyer = await startLoopbackNode('buyer');
    await buyer.libp2p.dial(seller.libp2p.getMultiaddrs());
    server = await serveRequests(
      seller,
      async (request) => {
        handled.push(request.path);
        // Slower than a round trip: an echo sent on its own would arrive well before this.
        await new Promise((resolve) => setTimeout(resolve, 50));
        return { status: 200, headers: {}, body: text.encode(`got ${request.path}`) };
      },
      { uploadLimitBytes: () => 1024 * 1024, receiveTimeoutMs: 100 },
    );
    // A protocol served by a plain libp2p handler: libp2p negotiates and echoes it as before.
    await seller.libp2p.handle(plain, (stream) => {
      stream.addEventListener('message', (event) => {
        stream.send(event.data);
        void stream.close();
      });
    });
  });

  afterAll(async () => {
    await server?.stop();
    await buyer?.stop();
    await seller?.stop();
  });

  /** A request stream to the seller, as the buyer opens one. */
  async function openTo(protocol: string, signal: AbortSignal) {
    const connection = await requestConnection(buyer, seller.libp2pPeerId, signal);
    return openRequestStream(connection, protocol, signal);
  }
  const open = () => openTo(REQUEST_PROTOCOL, AbortSignal.timeout(5000));

  /** Opens a request stream and sends the proposal, a head for `path` and `frames`. */
  const start = async (path: string, bodyLength: number, frames: Uint8Array[]) => {
    const opened = await open();
    const received = deliveries(opened.stream);
    const head = jsonPayload({ method: 'POST', path, headers: {}, bodyLength });
    opened.stream.send(
      Buffer.concat([opened.proposal, encodeFrame(FrameType.head, head), ...frames]),
    );
    return { opened, received };
  };

  it('get the echo in the same delivery as the answer', async () => {
    const { opened, received } = await start('/x', 0, [
      encodeFrame(FrameType.end, new Uint8Array(0)),
    ]);
    await until(() => Buffer.concat(received).includes('got /x'));
    // The first bytes the buyer gets are the echo (its proposal) followed by the answer.
    const first = received[0]!;
    expect(first.subarray(0, opened.proposal.byteLength).equals(opened.proposal)).toBe(true);
    expect(first.byteLength).toBeGreaterThan(opened.proposal.byteLength);
    expect(first.subarray(opened.proposal.byteLength)[0]).toBe(FrameType.head);
  });

  it('leave protocols served by other handlers to libp2p', async () => {
    const signal = AbortSignal.timeout(5000);
    const opened = await openTo(plain, signal);
    const received = deliveries(opened.stream);
    opened.stream.send(Buffer.concat([opened.proposal, Buffer.from('ping')]));
    await until(() => Buffer.concat(received).includes('ping'));
    expect(
      Buffer.concat(received).equals(Buffer.concat([opened.proposal, Buffer.from('ping')])),
    ).toBe(true);
  });

  it('are reset when the body stops coming within the receive time', async () => {
    const { opened } = await start('/partial', 10, [
      encodeFrame(FrameType.data, new Uint8Array(4)),
    ]);
    expect(await closeOf(opened.stream)).toBe('reset');
    expect(handled).not.toContain('/partial');
  });

  it('are reset when nothing but the proposal comes within the receive time', async () => {
    const opened = await open();
    opened.stream.send(opened.proposal);
    expect(await closeOf(opened.stream)).toBe('reset');
  });
});

describe('pre-negotiated request streams over the stream limit', () => {
  it('are reset as libp2p resets them, and the ones within it are served', async () => {
    const seller = await startLoopbackNode('seller');
    const buyer = await startLoopbackNode('buyer');
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const server = await serveRequests(
      seller,
      async (request) => {
        await held;
        return { status: 200, headers: {}, body: text.encode(`got ${request.path}`) };
      },
      { uploadLimitBytes: () => 1024 * 1024, maxInboundStreams: 1 },
    );
    try {
      await buyer.libp2p.dial(seller.libp2p.getMultiaddrs());
      const send = async (path: string) => {
        const signal = AbortSignal.timeout(5000);
        const connection = await requestConnection(buyer, seller.libp2pPeerId, signal);
        const opened = await openRequestStream(connection, REQUEST_PROTOCOL, signal);
        const received = deliveries(opened.stream);
        const head = jsonPayload({ method: 'POST', path, headers: {}, bodyLength: 0 });
        opened.stream.send(
          Buffer.concat([
            opened.proposal,
            encodeFrame(FrameType.head, head),
            encodeFrame(FrameType.end, new Uint8Array(0)),
          ]),
        );
        return { stream: opened.stream, received };
      };
      const first = await send('/first');
      await new Promise((resolve) => setTimeout(resolve, 50));
      const second = await send('/second');
      await until(() => second.stream.status !== 'open');
      expect(second.stream.status).toBe('reset');
      release();
      await until(() => Buffer.concat(first.received).includes('got /first'));
    } finally {
      release();
      await server.stop();
      await buyer.stop();
      await seller.stop();
    }
  });
});
