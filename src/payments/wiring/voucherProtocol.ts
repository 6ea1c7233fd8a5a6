/**
 * `/svc/voucher/1` on libp2p (decision 070): the buyer opens a stream, writes one encoded
 * voucher message and closes its side; the seller answers with one encoded reply and closes.
 * Both sides read at most `MAX_VOUCHER_MESSAGE_BYTES`, so a hostile peer cannot make either
 * buffer more.
 */
import type { Stream } from '@libp2p/interface';
import { asError } from '../../errors/index.js';
import type { PeerId } from '../../identity/index.js';
import { type PeerRouter, requestConnection, type SvcNode } from '../../network/index.js';
import {
  decodeVoucherReply,
  encodeVoucherMessage,
  MAX_VOUCHER_MESSAGE_BYTES,
  VOUCHER_PROTOCOL,
  type VoucherMessage,
  type VoucherReply,
} from '../wire.js';

const STREAM_TIMEOUT_MS = 10_000;

function toBytes(data: Uint8Array | { subarray(): Uint8Array }): Uint8Array {
  return data instanceof Uint8Array ? data : data.subarray();
}

/** Collects everything the remote writes until it closes its side (bounded, with a deadline). */
function collect(stream: Stream, signal: AbortSignal): Promise<Uint8Array> {
  return new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    let done = false;
    const finish = (error?: Error) => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve(Buffer.concat(chunks));
    };
    const onAbort = () => finish(new Error('voucher stream timed out'));
    signal.addEventListener('abort', onAbort, { once: true });
    stream.addEventListener('message', (event) => {
      const bytes = toBytes(event.data);
      size += bytes.byteLength;
      if (size > MAX_VOUCHER_MESSAGE_BYTES) {
        stream.abort(new Error('voucher message too large'));
        finish(new Error('voucher message too large'));
        return;
      }
      chunks.push(bytes);
    });
    stream.addEventListener('remoteCloseWrite', () => finish());
    stream.addEventListener('close', (event) =>
      finish(event.error === undefined ? undefined : event.error),
    );
    if (stream.remoteWriteStatus === 'closed') finish();
  });
}

/** Mounts the seller's voucher handler (`SellerPaymentService.handleVoucherBytes`) on its node. */
export async function serveVouchers(
  node: SvcNode,
  handle: (bytes: Uint8Array) => Promise<Uint8Array>,
): Promise<() => Promise<void>> {
  await node.libp2p.handle(
    VOUCHER_PROTOCOL,
    async (stream: Stream) => {
      const signal = AbortSignal.timeout(STREAM_TIMEOUT_MS);
      try {
        const request = await collect(stream, signal);
        const reply = await handle(request);
        if (!stream.send(reply)) await stream.onDrain({ signal });
        await stream.close({ signal });
      } catch (error) {
        stream.abort(asError(error));
      }
    },
    { maxInboundStreams: 64 },
  );
  return () => node.libp2p.unhandle(VOUCHER_PROTOCOL);
}

/** Sends one voucher to a seller over `/svc/voucher/1`; resolves with the seller's reply. */
export async function sendVoucher(
  node: SvcNode,
  router: PeerRouter,
  peerId: PeerId,
  voucher: VoucherMessage,
): Promise<VoucherReply> {
  const route = router.route(peerId);
  if (!route) throw new Error(`no route to seller ${peerId}`);
  const signal = AbortSignal.timeout(STREAM_TIMEOUT_MS);
  // The connection a request would take (an open one, or a dial by the route's addresses that
  // a request may already have under way): a voucher never opens a second one.
  const connection = await requestConnection(node, route.libp2pPeerId, signal, {
    addresses: route.addresses,
  });
  const stream = await connection.newStream(VOUCHER_PROTOCOL, { signal });
  try {
    const reply = collect(stream, signal);
    reply.catch(() => undefined);
    if (!stream.send(encodeVoucherMessage(voucher))) await stream.onDrain({ signal });
    await stream.close({ signal });
    return decodeVoucherReply(await reply);
  } catch (error) {
    stream.abort(asError(error));
    throw error;
  }
}
