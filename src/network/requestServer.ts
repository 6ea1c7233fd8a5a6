/**
 * Seller side of `/svc/request/1`: reads and checks the request, hands it to the handler with
 * an AbortSignal that fires when the buyer resets the stream (or a timeout passes), then sends
 * the reply head, body (awaiting drain: backpressure) and trailer. A hostile or broken stream
 * only ever aborts that stream. With `receipts`, the request and the reply are hashed as they
 * pass and the trailer carries the answer's signed receipt (src/network/receipts.ts).
 */
import type { Connection, Stream } from '@libp2p/interface';
import { asError } from '../errors/index.js';
import type { PeerId } from '../identity/index.js';
import {
  DATA_FRAME_BYTES,
  EMPTY,
  encodeFrames,
  FrameError,
  type FramePart,
  FrameReader,
  FrameType,
  jsonPayload,
  writeBytes,
  writeData,
  writeFrame,
} from './frames.js';
import { peerIdFromLibp2p } from './keys.js';
import type { SvcNode } from './node.js';
import { preNegotiatedProtocols, takeOwedEcho } from './preNegotiated.js';
import { REQUEST_PROTOCOL } from './protocols.js';
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

export interface RequestServerOptions {
  /** Largest request body; larger requests get 413 without their body being read. */
  uploadLimitBytes: () => number;
  /** Time allowed to receive the whole request. */
  receiveTimeoutMs?: number;
  /** Stream closed after this long with no bytes either way. */
  idleTimeoutMs?: number;
  /** Upper bound on one request (streaming included). */
  totalTimeoutMs?: number;
  maxInboundStreams?: number;
  /** Protocol id served (default `/svc/request/1`; the gateway tunnel reuses the framing). */
  protocol?: string;
  /** Signs each answer's receipt with the node's key (`receiptIssuer`); none: no receipts. */
  receipts?: ReceiptIssuer;
}

export interface RequestServer {
  /** Streams being served right now. */
  active(): number;
  stop(): Promise<void>;
}

async function readRequest(
  reader: FrameReader,
  uploadLimit: number,
  signal: AbortSignal,
): Promise<{ head: RequestHead; body: Uint8Array } | { head: RequestHead; tooLarge: true }> {
  const first = await reader.read(frameLimit, signal);
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
interface OwedEcho {
  take(): Uint8Array | undefined;
  send(): void;
}

function owedEcho(stream: Stream): OwedEcho {
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

/** One request's receipt in the making: who signs it, for whom, over which request. */
interface Receipting {
  issue: ReceiptIssuer;
  seller: PeerId;
  buyer: PeerId;
  requestHash: `0x${string}`;
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
        requestHash: receipting.requestHash,
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

async function sendReply(
  stream: Stream,
  reply: OutboundReply,
  signal: AbortSignal,
  echo: OwedEcho,
  receipting?: Receipting,
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
    await writeBytes(stream, encodeFrames(owed, frames), signal);
    await stream.close({ signal });
    return;
  }
  await writeBytes(stream, encodeFrames(owed, [[FrameType.head, head]]), signal);
  // The answer's bytes are hashed as they go out, after each is written: what was sent.
  const sent = receipting ? ExchangeHasher.response(reply.status) : undefined;
  let bodyError: Error | undefined;
  try {
    if (reply.body instanceof Uint8Array) {
      await writeData(stream, reply.body, signal);
      sent?.update(reply.body);
    } else {
      for await (const chunk of reply.body) {
        if (signal.aborted) throw asError(signal.reason);
        await writeData(stream, chunk, signal);
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
  await writeFrame(stream, FrameType.trailer, jsonPayload(trailer), signal);
  await stream.close({ signal });
}

/** Registers the request handler on the node. */
export async function serveRequests(
  node: SvcNode,
  handler: RequestHandler,
  options: RequestServerOptions,
): Promise<RequestServer> {
  const served: Served = {
    node,
    handler,
    options,
    receiveTimeoutMs: options.receiveTimeoutMs ?? node.config.requestHeadTimeoutSeconds * 1000,
    idleTimeoutMs: options.idleTimeoutMs ?? node.config.requestIdleTimeoutSeconds * 1000,
    totalTimeoutMs: options.totalTimeoutMs ?? node.config.requestTotalTimeoutSeconds * 1000,
    live: new Set<AbortController>(),
  };
  const protocol = options.protocol ?? REQUEST_PROTOCOL;
  const maxInboundStreams = options.maxInboundStreams ?? 1024;
  const serve = (stream: Stream, connection: Connection) => {
    serveStream(served, stream, connection).catch((error: unknown) => {
      node.logger.error({ err: asError(error).message }, 'request handler crashed');
      stream.abort(asError(error));
    });
  };
  await node.libp2p.handle(protocol, serve, { maxInboundStreams });
  // Streams that open with their proposal come straight here (preNegotiated.ts).
  const preNegotiated = preNegotiatedProtocols.get(node.libp2p)?.handlers;
  preNegotiated?.set(protocol, { handler: serve, maxInboundStreams });
  return {
    active: () => served.live.size,
    async stop() {
      preNegotiated?.delete(protocol);
      await node.libp2p.unhandle(protocol).catch(() => undefined);
      for (const controller of served.live)
        controller.abort(new FrameError('aborted', 'seller stopping'));
    },
  };
}

/** What every stream of one server shares: its handler, limits and the streams in flight. */
interface Served {
  node: SvcNode;
  handler: RequestHandler;
  options: RequestServerOptions;
  receiveTimeoutMs: number;
  idleTimeoutMs: number;
  totalTimeoutMs: number;
  live: Set<AbortController>;
}

/** Serves one stream; any failure aborts the handler's signal and resets only this stream. */
async function serveStream(served: Served, stream: Stream, connection: Connection): Promise<void> {
  const controller = new AbortController();
  served.live.add(controller);
  const total = guardStream(served, stream, controller);
  const echo = owedEcho(stream);
  const receiving = receiveDeadline(served.receiveTimeoutMs, controller);
  // A large body only follows once the buyer has the echo: send it before waiting for bytes.
  const reader = new FrameReader(stream, undefined, () => {
    echo.send();
    receiving.arm();
  });
  try {
    await answerRequest(served, stream, connection, reader, controller, echo, receiving);
  } catch (error) {
    if (!controller.signal.aborted) controller.abort(asError(error));
    served.node.logger.debug({ err: asError(error).message }, 'request stream failed');
    stream.abort(asError(error));
  } finally {
    clearTimeout(total);
    served.live.delete(controller);
  }
}

/**
 * The time allowed to receive the request, counted from the first time reading it has to wait
 * for bytes: a request that arrived whole with its stream (most do) never needs a timer, an
 * AbortController and listeners of its own (decision 158). Running out aborts the stream.
 */
interface ReceiveDeadline {
  arm(): void;
  clear(): void;
}

function receiveDeadline(ms: number, controller: AbortController): ReceiveDeadline {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let done = false;
  return {
    arm() {
      if (timer !== undefined || done) return;
      timer = setTimeout(
        () => controller.abort(new FrameError('timeout', 'request not received in time')),
        ms,
      );
      timer.unref();
    },
    clear() {
      done = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}

/**
 * Sets the idle timeout and aborts `controller` after the total timeout or when the buyer resets
 * the stream; returns the total timer for the caller to clear.
 */
function guardStream(
  served: Served,
  stream: Stream,
  controller: AbortController,
): ReturnType<typeof setTimeout> {
  stream.inactivityTimeout = served.idleTimeoutMs;
  const total = setTimeout(
    () => controller.abort(new FrameError('timeout', 'request took too long')),
    served.totalTimeoutMs,
  );
  stream.addEventListener('close', (event) => {
    if (event.error !== undefined || stream.status !== 'closed') {
      controller.abort(
        new FrameError('reset', `buyer closed the stream: ${event.error?.message ?? 'reset'}`),
      );
    }
  });
  return total;
}

/** Reads the request within the receive timeout, and sends the handler's reply (or a 413). */
async function answerRequest(
  served: Served,
  stream: Stream,
  connection: Connection,
  reader: FrameReader,
  controller: AbortController,
  echo: OwedEcho,
  receiving: ReceiveDeadline,
): Promise<void> {
  const signal = controller.signal;
  const buyer = peerIdFromLibp2p(connection.remotePeer);
  if (buyer === undefined) throw new FrameError('protocol', 'remote key is not secp256k1');
  const request = await readRequest(reader, served.options.uploadLimitBytes(), signal).finally(
    receiving.clear,
  );
  if ('tooLarge' in request) {
    await sendReply(stream, tooLargeReply(served.options.uploadLimitBytes()), signal, echo);
    return;
  }
  const { head, body } = request;
  const issue = served.options.receipts;
  const receipting: Receipting | undefined = issue && {
    issue,
    seller: served.node.peerId,
    buyer,
    requestHash: requestHash(head.method, head.path, body),
  };
  const reply = await served.handler({
    peerId: buyer,
    method: head.method,
    path: head.path,
    headers: head.headers,
    body,
    ...(head.payment !== undefined ? { payment: head.payment } : {}),
    signal,
  });
  await sendReply(stream, reply, signal, echo, receipting);
}

function tooLargeReply(uploadLimitBytes: number): OutboundReply {
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
