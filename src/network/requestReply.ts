/**
 * What one request on a seller's stream takes, on `/svc/request/1` and `/2` alike: reading and
 * checking the request, and sending the reply head, body (awaiting drain: backpressure) and
 * trailer with its receipt. On `/svc/request/1` the reply closes the stream; on `/2` the stream
 * stays open for the buyer's next request (requestServer.ts).
 */
import type { Stream } from '@libp2p/interface';
import { asError } from '../errors/index.js';
import type { PeerId } from '../identity/index.js';
import {
  DATA_FRAME_BYTES,
  EMPTY,
  encodeFrame,
  encodeFrames,
  type Frame,
  FrameError,
  type FramePart,
  type FrameReader,
  FrameType,
  jsonPayload,
} from './frames.js';
import { drained, writeBytes, writeData, writeFrame } from './frameWrites.js';
import { takeOwedEcho } from './preNegotiated.js';
import { ExchangeHasher, requestHash, responseHash } from './receiptHashes.js';
import { fitsReceipt, type ReceiptIssuer, type ReceiptTerms, receiptFields } from './receipts.js';
import { frameLimit, parseFrame, type RequestHead, requestHeadSchema } from './requestWire.js';
import type { SellerTrailer } from './types.js';
import { quickRequestHead } from './wireChecks.js';

/** A request as the seller sees it. */
export interface InboundRequest {
  /** The buyer's peer id, proven by the connection's key. */
  peerId: PeerId;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Uint8Array;
  payment?: Record<string, unknown>;
  /** Aborted when the buyer cancels (stream reset) or the request times out. */
  signal: AbortSignal;
}

/** The seller's answer. */
export interface OutboundReply {
  status: number;
  headers: Record<string, string>;
  body?: AsyncIterable<Uint8Array> | Uint8Array;
  /** Called once the body was sent or failed; `bodyError` says why it failed. */
  trailer?: (bodyError?: Error) => SellerTrailer | Promise<SellerTrailer>;
  /** The service and price the receipt names (none: an answer before any routing, e.g. a 404). */
  terms?: ReceiptTerms;
}

export type RequestHandler = (request: InboundRequest) => Promise<OutboundReply>;

/**
 * Reads one request: its head (`first` when the caller already read it: the next request on a
 * kept stream), body and END.
 */
export async function readRequest(
  reader: FrameReader,
  uploadLimit: number,
  signal: AbortSignal,
  read?: Frame,
): Promise<{ head: RequestHead; body: Uint8Array } | { head: RequestHead; tooLarge: true }> {
  const first = read ?? (await reader.read(frameLimit, signal));
  if (first?.type !== FrameType.head) throw new FrameError('protocol', 'expected a request head');
  const head = parseFrame(requestHeadSchema, first.payload, 'request head', quickRequestHead);
  if (head.bodyLength > uploadLimit) return { head, tooLarge: true };
  // Collected as it arrives (never pre-allocated from the declared length: a hostile head
  // could otherwise make us reserve the whole upload limit per stream without sending a byte).
  const chunks: Uint8Array[] = [];
  let received = 0;
  for (;;) {
    const frame = await reader.read(frameLimit, signal);
    if (frame === undefined) throw new FrameError('eof', 'request ended before its END frame');
    if (frame.type === FrameType.end) break;
    if (frame.type !== FrameType.data) {
      throw new FrameError('protocol', 'unexpected frame in request body');
    }
    if (received + frame.payload.byteLength > head.bodyLength) {
      throw new FrameError('protocol', 'request body longer than its declared bodyLength');
    }
    chunks.push(frame.payload);
    received += frame.payload.byteLength;
  }
  if (received !== head.bodyLength) {
    throw new FrameError('protocol', 'request body shorter than declared');
  }
  const body: Uint8Array = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  return { head, body };
}

/**
 * The multistream-select echo a pre-negotiated stream still owes the buyer (preNegotiated.ts):
 * `take` hands it out once, to lead the first write; `send` writes it on its own.
 */
export interface OwedEcho {
  take(): Uint8Array | undefined;
  send(): void;
}

export function owedEcho(stream: Stream): OwedEcho {
  let echo = takeOwedEcho(stream);
  const take = () => {
    const taken = echo;
    echo = undefined;
    return taken;
  };
  return {
    take,
    send() {
      const taken = take();
      if (taken !== undefined) stream.send(taken);
    },
  };
}

/** The trailer's `error` is bounded on the wire (4,096 characters); a reason is cut well below. */
const MAX_TRAILER_ERROR_CHARS = 1000;

/**
 * One request's receipt in the making: who signs it, for whom, over which request. The request
 * hash is made once (`receiptRequestHash`): the request server asks for it while the handler
 * waits on its upstream, off the answer's path, and the receipt takes it then or makes it.
 */
export interface Receipting {
  issue: ReceiptIssuer;
  seller: PeerId;
  buyer: PeerId;
  request: { method: string; path: string; body: Uint8Array };
  requestHash?: `0x${string}`;
}

/** The request hash of a receipt in the making, made on the first call. */
export function receiptRequestHash(receipting: Receipting): `0x${string}` {
  const { method, path, body } = receipting.request;
  receipting.requestHash ??= requestHash(method, path, body);
  return receipting.requestHash;
}

/**
 * Adds the answer's receipt to its trailer, claims and all (signed once, here, at the end). An
 * answer whose receipt cannot be made (a service id no receipt can carry, a signer that fails)
 * goes without one rather than with a trailer the buyer would refuse whole.
 */
function withReceipt(
  trailer: SellerTrailer,
  reply: OutboundReply,
  receipting: Receipting | undefined,
  responseHash: `0x${string}`,
): SellerTrailer {
  if (receipting === undefined) return trailer;
  if (reply.terms !== undefined && !fitsReceipt(reply.terms.serviceId)) return trailer;
  try {
    trailer.receipt = receipting.issue(
      receiptFields({
        seller: receipting.seller,
        buyer: receipting.buyer,
        requestHash: receiptRequestHash(receipting),
        responseHash,
        terms: reply.terms,
        claims: trailer,
        timeMs: Date.now(),
      }),
    );
  } catch {
    // No receipt: the buyer refuses the answer's claim (decision 168), which is the honest outcome.
  }
  return trailer;
}

/**
 * Sends `reply`; `close`: the stream's last answer, its write side closes after the trailer;
 * `stallMs`: how long a write may wait for the buyer to take bytes.
 */
export async function sendReply(
  stream: Stream,
  reply: OutboundReply,
  signal: AbortSignal,
  echo: OwedEcho,
  close: boolean,
  receipting?: Receipting,
  stallMs?: number,
): Promise<void> {
  const head = JSON.stringify({ status: reply.status, headers: reply.headers });
  const owed = echo.take() ?? EMPTY;
  if (
    reply.body === undefined ||
    (reply.body instanceof Uint8Array && reply.body.byteLength <= DATA_FRAME_BYTES)
  ) {
    // A small whole answer: head, body and trailer in one write (one muxer frame, one
    // encryption, one packet) — this is most non-streaming answers — encoded into one buffer.
    const body = reply.body ?? EMPTY;
    const claimed = (await reply.trailer?.()) ?? {};
    const trailer = receipting
      ? withReceipt(claimed, reply, receipting, responseHash(reply.status, body))
      : claimed;
    const frames: FramePart[] = [[FrameType.head, head]];
    if (body.byteLength > 0) frames.push([FrameType.data, body]);
    frames.push([FrameType.trailer, JSON.stringify(trailer)]);
    await writeBytes(stream, encodeFrames(owed, frames), signal, stallMs);
    if (close) await stream.close({ signal });
    return;
  }
  await writeBytes(stream, encodeFrames(owed, [[FrameType.head, head]]), signal, stallMs);
  // The answer's bytes are hashed as they go out, after each is written: what was sent.
  const sent = receipting ? ExchangeHasher.response(reply.status) : undefined;
  let bodyError: Error | undefined;
  try {
    if (reply.body instanceof Uint8Array) {
      await writeData(stream, reply.body, signal, stallMs);
      sent?.update(reply.body);
    } else {
      for await (const chunk of reply.body) {
        if (signal.aborted) throw asError(signal.reason);
        // Most chunks fit one frame: sent here, awaiting only when the stream is full.
        if (chunk.byteLength > DATA_FRAME_BYTES) await writeData(stream, chunk, signal, stallMs);
        else if (!stream.send(encodeFrame(FrameType.data, chunk)))
          await drained(stream, signal, stallMs);
        sent?.update(chunk);
      }
    }
  } catch (error) {
    bodyError = asError(error);
  }
  if (signal.aborted) {
    // Cancelled: no trailer goes out, but the handler still learns what was delivered (billing).
    await Promise.resolve(reply.trailer?.(bodyError ?? asError(signal.reason))).catch(
      () => undefined,
    );
    throw asError(signal.reason);
  }
  const claimed = (await reply.trailer?.(bodyError)) ?? {};
  if (bodyError !== undefined && claimed.error === undefined)
    claimed.error = bodyError.message.slice(0, MAX_TRAILER_ERROR_CHARS);
  const trailer = sent ? withReceipt(claimed, reply, receipting, sent.digest()) : claimed;
  await writeFrame(stream, FrameType.trailer, jsonPayload(trailer), signal, stallMs);
  if (close) await stream.close({ signal });
}

/** The 413 answer to a request whose declared body exceeds the upload limit. */
export function tooLargeReply(uploadLimitBytes: number): OutboundReply {
  return {
    status: 413,
    headers: { 'content-type': 'application/json' },
    body: jsonPayload({
      error: {
        code: 'upload_body_too_large',
        message: `body exceeds ${uploadLimitBytes} bytes`,
      },
    }),
    trailer: () => ({ error: 'upload_body_too_large' }),
  };
}
