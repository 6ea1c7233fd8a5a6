import type { Stream } from '@libp2p/interface';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFrame, FrameType, jsonPayload } from './frames.js';
import type { SvcNode } from './node.js';
import { REQUEST_PROTOCOL } from './protocols.js';
import { type RequestServer, serveRequests } from './requestServer.js';
import { openRequestStream } from './requestStream.js';
import { startLoopbackNode } from './testing/loopback.js';

/** Resolves once `stream` is reset or aborted (the seller gave up on it). */
function resetOf(stream: Stream): Promise<string> {
  return new Promise((resolve) => {
    if (stream.status !== 'open') resolve(stream.status);
    stream.addEventListener('close', () => resolve(stream.status));
  });
}

describe('a request that does not arrive in time', () => {
  let seller: SvcNode;
  let buyer: SvcNode;
  let server: RequestServer;
  let handled = 0;

  beforeAll(async () => {
    seller = await startLoopbackNode('seller');
    buyer = await startLoopbackNode('buyer');
    await buyer.libp2p.dial(seller.libp2p.getMultiaddrs());
    server = await serveRequests(
      seller,
      async () => {
        handled++;
        return { status: 200, headers: {}, body: new Uint8Array(0) };
      },
      { uploadLimitBytes: () => 1024 * 1024, receiveTimeoutMs: 100 },
    );
  });

  afterAll(async () => {
    await server?.stop();
    await buyer?.stop();
    await seller?.stop();
  });

  const open = () =>
    openRequestStream(buyer, seller.libp2pPeerId, REQUEST_PROTOCOL, AbortSignal.timeout(5000));

  it('is reset when its body stops coming', async () => {
    const opened = await open();
    const head = jsonPayload({ method: 'POST', path: '/x', headers: {}, bodyLength: 10 });
    opened.stream.send(
      Buffer.concat([
        opened.proposal,
        encodeFrame(FrameType.head, head),
        encodeFrame(FrameType.data, new Uint8Array(4)),
      ]),
    );
    expect(await resetOf(opened.stream)).toBe('reset');
    expect(handled).toBe(0);
  });

  it('is reset when nothing but the proposal comes', async () => {
    const opened = await open();
    opened.stream.send(opened.proposal);
    expect(await resetOf(opened.stream)).toBe('reset');
    expect(handled).toBe(0);
  });
});
