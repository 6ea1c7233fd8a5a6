/**
 * Buyer side of `/svc/request/1` (PeerTransport). One stream per request: head + body + END
 * out, then head, body chunks (pulled by the consumer: backpressure) and the trailer back.
 * Aborting the request's signal, or stopping iteration of the body, resets the stream, which
 * the seller sees as a cancel. Every failure surfaces as a TransportError.
 */
import type { Stream } from '@libp2p/interface';
import { asError, errorMessage } from '../errors/index.js';
import type { PeerId } from '../identity/index.js';
import { deadline } from './deadline.js';
import type { PeerRoute } from './directory.js';
import {
  DATA_FRAME_BYTES,
  EMPTY,
  encodeFrames,
  FrameError,
  type FramePart,
  FrameReader,
  FrameType,
  writeBytes,
  writeData,
} from './frames.js';
import type { SvcNode } from './node.js';
import { REQUEST_PROTOCOL } from './protocols.js';
import { ExchangeHasher, requestHash } from './receiptHashes.js';
import {
  openRequestStream,
  ProtocolRejected,
  type RequestStream,
  usableConnections,
} from './requestStream.js';
import { frameLimit, parseFrame, responseHeadSchema, trailerSchema } from './requestWire.js';
import {
  type PeerTransport,
  type ReceivedExchange,
  type SellerRequest,
  type SellerResponse,
  type SellerTrailer,
  TransportError,
  type TransportFailure,
} from './types.js';
import { quickResponseHead, quickTrailer } from './wireChecks.js';

/** Where the transport learns how to reach a peer (the directory implements it). */
export interface PeerRouter {
  route(peerId: PeerId): PeerRoute | undefined;
  /** `route`: the one the failed attempt used (a verdict on an older route is stale). */
  markUnreachable?(peerId: PeerId, reason: string, route?: PeerRoute): void;
}

export interface LibP2pTransportOptions {
  node: SvcNode;
  router: PeerRouter;
  /** Default head timeout when the request sets none. */
  headTimeoutMs?: number;
  idleTimeoutMs?: number;
  totalTimeoutMs?: number;
  dialTimeoutMs?: number;
  /** Protocol id spoken (default `/svc/request/1`; the gateway tunnel reuses the framing). */
  protocol?: string;
}

const noop = () => undefined;
const HEAD_TIMEOUT_MESSAGE = 'no response head in time';

class Cancelled extends Error {}
class TimedOut extends Error {}

/** PeerTransport over libp2p streams. */
export class LibP2pTransport implements PeerTransport {
  private readonly node: SvcNode;
  private readonly router: PeerRouter;
  private readonly headTimeoutMs: number;
  private readonly idleTimeoutMs: number;
  private readonly totalTimeoutMs: number;
  private readonly dialTimeoutMs: number;
  private readonly protocol: string;
  /** Answers on `/svc/request/1` carry receipts: their bytes are hashed as they arrive. */
  private readonly receipts: boolean;

  constructor(options: LibP2pTransportOptions) {
    const config = options.node.config;
    this.node = options.node;
    this.router = options.router;
    this.headTimeoutMs = options.headTimeoutMs ?? config.requestHeadTimeoutSeconds * 1000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? config.requestIdleTimeoutSeconds * 1000;
    this.totalTimeoutMs = options.totalTimeoutMs ?? config.requestTotalTimeoutSeconds * 1000;
    this.dialTimeoutMs = options.dialTimeoutMs ?? 10_000;
    this.protocol = options.protocol ?? REQUEST_PROTOCOL;
    this.receipts = this.protocol === REQUEST_PROTOCOL;
  }

  async request(peerId: PeerId, request: SellerRequest): Promise<SellerResponse> {
    const route = this.checkedRoute(peerId, request);
    const call = new Call(peerId, route, request.signal, this.totalTimeoutMs);
    const opened = await this.openStream(call);
    opened.stream.inactivityTimeout = this.idleTimeoutMs;
    // Views: the head and trailer are parsed at once, body chunks are delivered and dropped.
    const reader = new FrameReader(opened.stream, undefined, undefined, true);
    const head = await this.exchangeHead(call, request, opened, reader);
    const receipt = this.receipts ? new ReceiptInputs(this.node.peerId, request, head) : undefined;
    const { body, trailer } = responseBody(call, opened.stream, reader, receipt);
    return {
      status: head.status,
      headers: head.headers,
      body,
      trailer,
      ...(receipt ? { exchange: () => receipt.exchange() } : {}),
    };
  }

  /** The peer's route, once the request is known to fit it and not to be cancelled already. */
  private checkedRoute(peerId: PeerId, request: SellerRequest): PeerRoute {
    const route = this.router.route(peerId);
    if (route === undefined)
      throw transportFailure(peerId, 'unreachable', `peer ${peerId} is not known`, true);
    if (request.body.byteLength > route.uploadLimitBytes) {
      throw transportFailure(
        peerId,
        'too_large',
        `body of ${request.body.byteLength} bytes exceeds the seller's ${route.uploadLimitBytes}`,
        true,
      );
    }
    if (request.signal?.aborted)
      throw transportFailure(peerId, 'cancelled', 'request cancelled', true);
    return route;
  }

  /** Dials (within the dial timeout) and opens the request stream; a failure marks the peer unreachable. */
  private async openStream(call: Call): Promise<RequestStream> {
    const { route } = call;
    const connections = this.node.libp2p.getConnections(route.libp2pPeerId);
    const usable = usableConnections(connections);
    // The dial timeout only bounds a dial: on an open connection the stream opens at once, and
    // a timer, an AbortController and two listeners per request would guard nothing.
    const dialDeadline =
      usable.length > 0
        ? { signal: call.controller.signal, clear: noop }
        : deadline(call.controller.signal, this.dialTimeoutMs);
    try {
      // Only teach the peer store addresses when a dial is needed (it is a datastore write).
      if (route.addresses.length > 0 && connections.length === 0) {
        await this.node.libp2p.peerStore
          .merge(route.libp2pPeerId, { multiaddrs: [...route.addresses] })
          .catch(() => undefined);
      }
      // The protocol proposal goes out with the request head: no negotiation round trip.
      const opened = await openRequestStream(
        this.node,
        route.libp2pPeerId,
        this.protocol,
        dialDeadline.signal,
        usable,
      );
      dialDeadline.clear();
      return opened;
    } catch (error) {
      dialDeadline.clear();
      call.cleanup();
      if (call.controller.signal.reason instanceof Cancelled)
        throw transportFailure(call.peerId, 'cancelled', 'request cancelled', true, error);
      const message = errorMessage(error);
      this.router.markUnreachable?.(call.peerId, message, route);
      throw transportFailure(
        call.peerId,
        'unreachable',
        `cannot reach peer ${call.peerId}: ${message}`,
        true,
        error,
      );
    }
  }

  /** Sends the request and reads the response head within the head timeout. */
  private async exchangeHead(
    call: Call,
    request: SellerRequest,
    opened: RequestStream,
    reader: FrameReader,
  ): Promise<ResponseHead> {
    const stream = opened.stream;
    // The head timeout aborts the call itself (the call fails then anyway): no signal, controller
    // and listener of its own per request.
    const headTimer = setTimeout(
      abortCall,
      request.headTimeoutMs ?? this.headTimeoutMs,
      call.controller,
      HEAD_TIMED_OUT,
    );
    headTimer.unref();
    try {
      await this.sendRequest(call, request, opened, reader);
      return await readResponseHead(reader, call.controller.signal);
    } catch (error) {
      call.cleanup();
      if (error instanceof TransportError) {
        stream.abort(error);
        throw error;
      }
      throw classify(call, error, true, stream);
    } finally {
      clearTimeout(headTimer);
    }
  }

  /** Writes head, body and END; a large body waits for the seller to accept the protocol first. */
  private async sendRequest(
    call: Call,
    request: SellerRequest,
    opened: RequestStream,
    reader: FrameReader,
  ): Promise<void> {
    const { stream } = opened;
    const signal = call.controller.signal;
    const { method, path, headers, body, payment } = request;
    const sendHead = {
      method,
      path,
      headers,
      bodyLength: body.byteLength,
      ...(payment ? { payment } : {}),
    };
    const headJson = JSON.stringify(sendHead);
    if (body.byteLength <= DATA_FRAME_BYTES) {
      // Small requests go out in one write: one muxer frame, one encryption, one packet.
      const frames: FramePart[] =
        body.byteLength > 0
          ? [
              [FrameType.head, headJson],
              [FrameType.data, body],
              [FrameType.end, EMPTY],
            ]
          : [
              [FrameType.head, headJson],
              [FrameType.end, EMPTY],
            ];
      await writeBytes(stream, encodeFrames(opened.proposal, frames), signal);
      await this.acknowledged(opened, reader, signal, call);
    } else {
      // Large bodies wait for the seller to accept the protocol before being sent.
      await writeBytes(stream, encodeFrames(opened.proposal, [[FrameType.head, headJson]]), signal);
      await this.acknowledged(opened, reader, signal, call);
      await writeData(stream, body, signal);
      await writeBytes(stream, encodeFrames(EMPTY, [[FrameType.end, EMPTY]]), signal);
    }
  }

  /** Waits for the seller's protocol answer; a refusal makes the peer unreachable. */
  private async acknowledged(
    opened: RequestStream,
    reader: FrameReader,
    signal: AbortSignal,
    call: Call,
  ): Promise<void> {
    const { peerId } = call;
    try {
      await opened.acknowledged(reader, signal);
    } catch (error) {
      if (!(error instanceof ProtocolRejected)) throw error;
      this.router.markUnreachable?.(peerId, error.message, call.route);
      throw new TransportError(
        'unreachable',
        peerId,
        `cannot reach peer ${peerId}: ${error.message}`,
        {
          beforeHead: true,
          cause: error,
        },
      );
    }
  }
}

type ResponseHead = Pick<SellerResponse, 'status' | 'headers'>;

/** One request's abort controller: the caller's signal and the total timeout both abort it. */
class Call {
  readonly controller = new AbortController();
  private readonly total: NodeJS.Timeout;

  constructor(
    readonly peerId: PeerId,
    readonly route: PeerRoute,
    private readonly callerSignal: AbortSignal | undefined,
    totalTimeoutMs: number,
  ) {
    // The call itself is the caller signal's listener and the timer gets module functions: no
    // closures per request.
    callerSignal?.addEventListener('abort', this, { once: true });
    this.total = setTimeout(abortCall, totalTimeoutMs, this.controller, TIMED_OUT);
    this.total.unref();
  }

  /** The caller's signal aborted. */
  handleEvent(): void {
    this.controller.abort(new Cancelled('request cancelled'));
  }

  /** Clears the total timeout and stops listening to the caller's signal. */
  cleanup(): void {
    clearTimeout(this.total);
    this.callerSignal?.removeEventListener('abort', this);
  }
}

const TIMED_OUT = 'total';
const HEAD_TIMED_OUT = 'head';

function abortCall(controller: AbortController, why: typeof TIMED_OUT | typeof HEAD_TIMED_OUT) {
  controller.abort(
    why === TIMED_OUT
      ? new TimedOut('request took too long')
      : new FrameError('timeout', HEAD_TIMEOUT_MESSAGE),
  );
}

function transportFailure(
  peerId: PeerId,
  failure: TransportFailure,
  message: string,
  beforeHead: boolean,
  cause?: unknown,
): TransportError {
  return new TransportError(failure, peerId, message, { beforeHead, cause });
}

/** Resets the stream and names the failure by what aborted the call, else by the frame error. */
function classify(
  call: Call,
  error: unknown,
  beforeHead: boolean,
  stream?: Stream,
): TransportError {
  const fail = (failure: TransportFailure, message: string) =>
    transportFailure(call.peerId, failure, message, beforeHead, error);
  const reason: unknown = call.controller.signal.reason;
  stream?.abort(asError(error));
  if (reason instanceof Cancelled) return fail('cancelled', 'request cancelled');
  if (reason instanceof TimedOut) return fail('timeout', reason.message);
  // The head timeout (exchangeHead), whatever step it interrupted.
  if (reason instanceof FrameError && reason.kind === 'timeout')
    return fail('timeout', reason.message);
  if (error instanceof FrameError) {
    if (error.kind === 'timeout' || error.kind === 'aborted') return fail('timeout', error.message);
    if (error.kind === 'protocol' || error.kind === 'too_large')
      return fail('protocol', error.message);
    return fail('reset', `seller closed the stream: ${error.message}`);
  }
  return fail('reset', errorMessage(error));
}

/** Reads the response head frame (the head timeout aborts `signal` with a timeout FrameError). */
async function readResponseHead(reader: FrameReader, signal: AbortSignal): Promise<ResponseHead> {
  const frame = await reader.read(frameLimit, signal);
  if (frame === undefined) throw new FrameError('eof', 'seller closed the stream before answering');
  if (frame.type !== FrameType.head) throw new FrameError('protocol', 'expected a response head');
  return parseFrame(responseHeadSchema, frame.payload, 'response head', quickResponseHead);
}

/**
 * What a receipt must cover, gathered as the answer arrives: the response hash fed with each body
 * chunk (and the chunks kept, when asked), the request hash made only when asked for.
 */
class ReceiptInputs {
  private readonly response: ExchangeHasher;
  private kept: Uint8Array[] | undefined;
  private keptBytes = 0;
  private ended: { responseHash: `0x${string}`; responseBody?: Uint8Array } | undefined;
  private made: ReceivedExchange | undefined;

  constructor(
    private readonly buyerPeerId: PeerId,
    private readonly request: SellerRequest,
    head: ResponseHead,
  ) {
    this.response = ExchangeHasher.response(head.status);
    if (request.keepResponseBytes !== undefined) this.kept = [];
  }

  chunk(payload: Uint8Array): void {
    this.response.update(payload);
    if (this.kept === undefined) return;
    this.keptBytes += payload.byteLength;
    // Payloads are views of the received messages: the kept ones are copied.
    if (this.keptBytes <= (this.request.keepResponseBytes ?? 0)) this.kept.push(payload.slice());
    else this.kept = undefined;
  }

  /** The body ended with a trailer. */
  end(): void {
    const responseHash = this.response.digest();
    this.ended = this.kept
      ? { responseHash, responseBody: Buffer.concat(this.kept) }
      : { responseHash };
    this.kept = undefined;
  }

  exchange(): ReceivedExchange | undefined {
    if (this.ended === undefined) return undefined;
    const { method, path, body } = this.request;
    this.made ??= {
      buyerPeerId: this.buyerPeerId,
      requestHash: requestHash(method, path, body),
      ...this.ended,
    };
    return this.made;
  }
}

/** The body chunks, pulled by the consumer, and the trailer they end with. */
function responseBody(
  call: Call,
  stream: Stream,
  reader: FrameReader,
  receipt: ReceiptInputs | undefined,
): Pick<SellerResponse, 'body' | 'trailer'> {
  const trailer = Promise.withResolvers<SellerTrailer | undefined>();
  let consumed = false;
  async function* body(): AsyncGenerator<Uint8Array> {
    if (consumed) throw new TypeError('the response body can only be read once');
    consumed = true;
    let finished = false;
    try {
      for (;;) {
        let frame: Awaited<ReturnType<FrameReader['read']>>;
        try {
          frame = await reader.read(frameLimit, call.controller.signal);
          if (frame === undefined)
            throw new FrameError('eof', 'seller closed the stream before the trailer');
          if (frame.type === FrameType.trailer) {
            const parsed = parseFrame(trailerSchema, frame.payload, 'trailer', quickTrailer);
            receipt?.end();
            trailer.resolve(parsed);
            finished = true;
            await stream.close().catch(() => undefined);
            return;
          }
          if (frame.type !== FrameType.data)
            throw new FrameError('protocol', 'unexpected frame in response body');
        } catch (error) {
          throw classify(call, error, false, stream);
        }
        receipt?.chunk(frame.payload);
        yield frame.payload;
      }
    } finally {
      call.cleanup();
      if (!finished) {
        // The consumer stopped early or the stream failed: reset so the seller stops too.
        if (stream.status === 'open') stream.abort(new Error('request cancelled by the buyer'));
        trailer.resolve(undefined);
      }
    }
  }
  return { body: body(), trailer: trailer.promise };
}
