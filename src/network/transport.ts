/**
 * Buyer side of `/svc/request/1` and `/svc/request/2` (PeerTransport). Each request: head +
 * body + END out, then head, body chunks (pulled by the consumer: backpressure) and the trailer
 * back, on a stream of its own while it runs. On `/2` that stream comes from, and after a whole
 * answer goes back to, a pool of kept streams (streamPool.ts, decision 190); `/1` is used with
 * sellers that refuse `/2` (decision 191). Aborting the request's signal, or stopping iteration
 * of the body, resets the stream, which the seller sees as a cancel. Every failure surfaces as
 * a TransportError.
 */
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
} from './frames.js';
import { writeBytes, writeData } from './frameWrites.js';
import type { SvcNode } from './node.js';
import { REQUEST_PROTOCOL, REQUEST_STREAMS_PROTOCOL } from './protocols.js';
import { ReceiptInputs } from './receiptInputs.js';
import {
  abortCall,
  Call,
  Cancelled,
  classify,
  HEAD_TIMED_OUT,
  type Lease,
  type ResponseHead,
  readResponseHead,
  responseBody,
  transportFailure,
} from './requestCall.js';
import {
  openRequestStream,
  ProtocolRejected,
  requestConnection,
  usableConnections,
} from './requestStream.js';
import { StreamPool, type StreamPoolLimits } from './streamPool.js';
import {
  type PeerTransport,
  type SellerRequest,
  type SellerResponse,
  TransportError,
} from './types.js';

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
  /**
   * Kept `/svc/request/2` streams with sellers that serve it (default: the node's
   * `requestStreams`; only for the default protocol), with these pool bounds.
   */
  streams?: boolean | Partial<StreamPoolLimits>;
}

const noop = () => undefined;

/** The seller answered `na` to `/svc/request/2`: the request goes again on `/svc/request/1`. */
class StreamsRefused extends Error {}
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
  private readonly pool: StreamPool | undefined;

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
    const streams = options.streams ?? config.requestStreams;
    this.pool =
      streams !== false && this.protocol === REQUEST_PROTOCOL
        ? new StreamPool(typeof streams === 'object' ? streams : {})
        : undefined;
  }

  async request(peerId: PeerId, request: SellerRequest): Promise<SellerResponse> {
    const route = this.checkedRoute(peerId, request);
    const call = new Call(peerId, route, request.signal, this.totalTimeoutMs, this.idleTimeoutMs);
    let lease = await this.openStream(call, true);
    let head = await this.exchangeHead(call, request, lease).catch((error: unknown) => {
      if (this.again(call, lease, error)) return undefined;
      throw this.failed(call, lease, error);
    });
    if (head === undefined) {
      // Once, on a new stream: a kept stream the seller had ended, or `/2` refused.
      lease = await this.openStream(call, false);
      const second = lease;
      head = await this.exchangeHead(call, request, second).catch((error: unknown) => {
        throw this.failed(call, second, error);
      });
    }
    const receipt = this.receipts ? new ReceiptInputs(this.node.peerId, request, head) : undefined;
    const { body, trailer } = responseBody(call, lease, receipt, this.pool);
    return {
      status: head.status,
      headers: head.headers,
      body,
      trailer,
      ...(receipt ? { exchange: () => receipt.exchange() } : {}),
    };
  }

  /**
   * Whether a request whose stream failed goes again on a new stream: when `/2` was refused, or
   * when a kept stream failed before any byte of an answer (the seller had ended it: idle too
   * long, or its last request) and the call itself was neither cancelled nor timed out.
   */
  private again(call: Call, lease: Lease, error: unknown): boolean {
    if (call.controller.signal.aborted) return false;
    const refused = error instanceof StreamsRefused;
    const dead =
      lease.reused &&
      lease.reader.bytesTaken === lease.from &&
      !(error instanceof TransportError) &&
      !(error instanceof FrameError && (error.kind === 'protocol' || error.kind === 'too_large'));
    if (!refused && !dead) return false;
    if (refused) this.pool?.refuse(lease.connection);
    lease.stream.abort(asError(error));
    return true;
  }

  /** Ends the call and resets its stream: the failure as the caller sees it. */
  private failed(call: Call, lease: Lease, error: unknown): TransportError {
    call.cleanup();
    if (error instanceof TransportError) {
      lease.stream.abort(error);
      return error;
    }
    return classify(call, error, true, lease.stream);
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

  /**
   * A kept stream from the pool (`reuse`), else a new one (dialling within the dial timeout when
   * there is no connection): `/svc/request/2` unless the peer refused it on this connection. A
   * failure marks the peer unreachable.
   */
  private async openStream(call: Call, reuse: boolean): Promise<Lease> {
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
      // The peer store learns the route's addresses only when libp2p's dial queue is to dial
      // them (a datastore write), and then only when there is no connection at all.
      const remember = async () => {
        if (route.addresses.length === 0 || connections.length > 0) return;
        await this.node.libp2p.peerStore
          .merge(route.libp2pPeerId, { multiaddrs: [...route.addresses] })
          .catch(() => undefined);
      };
      const signal = dialDeadline.signal;
      const connection = await requestConnection(this.node, route.libp2pPeerId, signal, {
        usable,
        addresses: route.addresses,
        remember,
      });
      const pool = this.pool;
      const pooled = reuse ? pool?.take(connection) : undefined;
      if (pooled !== undefined) {
        dialDeadline.clear();
        const { stream, reader } = pooled;
        return {
          stream,
          reader,
          connection,
          kept: pooled,
          reused: true,
          from: reader.bytesTaken,
          proposal: EMPTY,
          acknowledged: async () => undefined,
        };
      }
      // The protocol proposal goes out with the request head: no negotiation round trip.
      let streams = pool?.mayStream(connection) === true;
      const opened = await openRequestStream(
        connection,
        streams ? REQUEST_STREAMS_PROTOCOL : this.protocol,
        signal,
      ).catch((error: unknown) => {
        // Refused while libp2p negotiated (a connection without our muxer's fast path).
        if (!(streams && error instanceof ProtocolRejected)) throw error;
        pool?.refuse(connection);
        streams = false;
        return openRequestStream(connection, this.protocol, signal);
      });
      dialDeadline.clear();
      // Views: the head and trailer are parsed at once, body chunks are delivered and dropped.
      const reader = new FrameReader(opened.stream, undefined, undefined, true);
      const kept = streams ? pool?.track(opened.stream, reader, connection) : undefined;
      return { ...opened, reader, connection, reused: false, from: 0, ...(kept ? { kept } : {}) };
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
    lease: Lease,
  ): Promise<ResponseHead> {
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
      await this.sendRequest(call, request, lease);
      return await readResponseHead(lease.reader, call.controller.signal);
    } finally {
      clearTimeout(headTimer);
    }
  }

  /** Writes head, body and END; a large body waits for the seller to accept the protocol first. */
  private async sendRequest(call: Call, request: SellerRequest, lease: Lease): Promise<void> {
    const { stream } = lease;
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
      await writeBytes(stream, encodeFrames(lease.proposal, frames), signal);
      await this.acknowledged(lease, signal, call);
    } else {
      // Large bodies wait for the seller to accept the protocol before being sent.
      await writeBytes(stream, encodeFrames(lease.proposal, [[FrameType.head, headJson]]), signal);
      await this.acknowledged(lease, signal, call);
      await writeData(stream, body, signal);
      await writeBytes(stream, encodeFrames(EMPTY, [[FrameType.end, EMPTY]]), signal);
    }
  }

  /**
   * Waits for the seller's protocol answer: a refusal of `/svc/request/2` is retried on `/1`
   * (`again`); of `/1`, it makes the peer unreachable.
   */
  private async acknowledged(lease: Lease, signal: AbortSignal, call: Call): Promise<void> {
    const { peerId } = call;
    try {
      await lease.acknowledged(lease.reader, signal);
    } catch (error) {
      if (!(error instanceof ProtocolRejected)) throw error;
      if (lease.kept !== undefined) throw new StreamsRefused(error.message, { cause: error });
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
