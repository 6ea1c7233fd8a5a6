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
  encodeFrame,
  FrameError,
  FrameReader,
  FrameType,
  jsonPayload,
  writeBytes,
  writeData,
} from './frames.js';
import type { SvcNode } from './node.js';
import { REQUEST_PROTOCOL } from './protocols.js';
import { openRequestStream, ProtocolRejected, type RequestStream } from './requestStream.js';
import { frameLimit, parseFrame, responseHeadSchema, trailerSchema } from './requestWire.js';
import {
  type PeerTransport,
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
  markUnreachable?(peerId: PeerId, reason: string): void;
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

  constructor(options: LibP2pTransportOptions) {
    const config = options.node.config;
    this.node = options.node;
    this.router = options.router;
    this.headTimeoutMs = options.headTimeoutMs ?? config.requestHeadTimeoutSeconds * 1000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? config.requestIdleTimeoutSeconds * 1000;
    this.totalTimeoutMs = options.totalTimeoutMs ?? config.requestTotalTimeoutSeconds * 1000;
    this.dialTimeoutMs = options.dialTimeoutMs ?? 10_000;
    this.protocol = options.protocol ?? REQUEST_PROTOCOL;
  }

  async request(peerId: PeerId, request: SellerRequest): Promise<SellerResponse> {
    const fail = (
      failure: TransportFailure,
      message: string,
      beforeHead: boolean,
      cause?: unknown,
    ) => new TransportError(failure, peerId, message, { beforeHead, cause });
    const route = this.router.route(peerId);
    if (route === undefined) throw fail('unreachable', `peer ${peerId} is not known`, true);
    if (request.body.byteLength > route.uploadLimitBytes) {
      throw fail(
        'too_large',
        `body of ${request.body.byteLength} bytes exceeds the seller's ${route.uploadLimitBytes}`,
        true,
      );
    }
    if (request.signal?.aborted) throw fail('cancelled', 'request cancelled', true);

    const controller = new AbortController();
    const onCancel = () => controller.abort(new Cancelled('request cancelled'));
    request.signal?.addEventListener('abort', onCancel, { once: true });
    const total = setTimeout(
      () => controller.abort(new TimedOut('request took too long')),
      this.totalTimeoutMs,
    );
    total.unref();
    const cleanup = () => {
      clearTimeout(total);
      request.signal?.removeEventListener('abort', onCancel);
    };
    const classify = (error: unknown, beforeHead: boolean, stream?: Stream): TransportError => {
      const reason: unknown = controller.signal.reason;
      stream?.abort(asError(error));
      if (reason instanceof Cancelled)
        return fail('cancelled', 'request cancelled', beforeHead, error);
      if (reason instanceof TimedOut) return fail('timeout', reason.message, beforeHead, error);
      if (error instanceof FrameError) {
        if (error.kind === 'timeout' || error.kind === 'aborted')
          return fail('timeout', error.message, beforeHead, error);
        if (error.kind === 'protocol' || error.kind === 'too_large')
          return fail('protocol', error.message, beforeHead, error);
        return fail('reset', `seller closed the stream: ${error.message}`, beforeHead, error);
      }
      return fail('reset', errorMessage(error), beforeHead, error);
    };

    let stream: Stream;
    let opened: RequestStream;
    const dialDeadline = deadline(controller.signal, this.dialTimeoutMs);
    try {
      // Only teach the peer store addresses when a dial is needed (it is a datastore write).
      if (
        route.addresses.length > 0 &&
        this.node.libp2p.getConnections(route.libp2pPeerId).length === 0
      ) {
        await this.node.libp2p.peerStore
          .merge(route.libp2pPeerId, { multiaddrs: [...route.addresses] })
          .catch(() => undefined);
      }
      // The protocol proposal goes out with the request head: no negotiation round trip.
      opened = await openRequestStream(
        this.node,
        route.libp2pPeerId,
        this.protocol,
        dialDeadline.signal,
      );
      stream = opened.stream;
      dialDeadline.clear();
    } catch (error) {
      dialDeadline.clear();
      cleanup();
      if (controller.signal.reason instanceof Cancelled)
        throw fail('cancelled', 'request cancelled', true, error);
      const message = errorMessage(error);
      this.router.markUnreachable?.(peerId, message);
      throw fail('unreachable', `cannot reach peer ${peerId}: ${message}`, true, error);
    }
    stream.inactivityTimeout = this.idleTimeoutMs;
    const reader = new FrameReader(stream);
    const headDeadline = deadline(controller.signal, request.headTimeoutMs ?? this.headTimeoutMs);
    const head = await (async () => {
      try {
        const { method, path, headers, body, payment } = request;
        const sendHead = {
          method,
          path,
          headers,
          bodyLength: body.byteLength,
          ...(payment ? { payment } : {}),
        };
        const headFrame = encodeFrame(FrameType.head, jsonPayload(sendHead));
        const endFrame = encodeFrame(FrameType.end, new Uint8Array(0));
        const headSignal = headDeadline.signal;
        if (body.byteLength <= DATA_FRAME_BYTES) {
          // Small requests go out in one write: one muxer frame, one encryption, one packet.
          const frames =
            body.byteLength > 0
              ? [opened.proposal, headFrame, encodeFrame(FrameType.data, body), endFrame]
              : [opened.proposal, headFrame, endFrame];
          await writeBytes(stream, Buffer.concat(frames), controller.signal);
          await this.acknowledged(opened, reader, headSignal, controller.signal, peerId);
        } else {
          // Large bodies wait for the seller to accept the protocol before being sent.
          await writeBytes(stream, Buffer.concat([opened.proposal, headFrame]), controller.signal);
          await this.acknowledged(opened, reader, headSignal, controller.signal, peerId);
          await writeData(stream, body, controller.signal);
          await writeBytes(stream, endFrame, controller.signal);
        }
        const frame = await reader.read(frameLimit, headSignal).catch((error: unknown) => {
          if (headSignal.aborted && !controller.signal.aborted) {
            throw new FrameError('timeout', 'no response head in time', error);
          }
          throw error;
        });
        if (frame === undefined)
          throw new FrameError('eof', 'seller closed the stream before answering');
        if (frame.type !== FrameType.head)
          throw new FrameError('protocol', 'expected a response head');
        return parseFrame(responseHeadSchema, frame.payload, 'response head', quickResponseHead);
      } catch (error) {
        cleanup();
        if (error instanceof TransportError) {
          stream.abort(error);
          throw error;
        }
        throw classify(error, true, stream);
      } finally {
        headDeadline.clear();
      }
    })();

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
            frame = await reader.read(frameLimit, controller.signal);
            if (frame === undefined)
              throw new FrameError('eof', 'seller closed the stream before the trailer');
            if (frame.type === FrameType.trailer) {
              trailer.resolve(parseFrame(trailerSchema, frame.payload, 'trailer', quickTrailer));
              finished = true;
              await stream.close().catch(() => undefined);
              return;
            }
            if (frame.type !== FrameType.data)
              throw new FrameError('protocol', 'unexpected frame in response body');
          } catch (error) {
            throw classify(error, false, stream);
          }
          yield frame.payload;
        }
      } finally {
        cleanup();
        if (!finished) {
          // The consumer stopped early or the stream failed: reset so the seller stops too.
          if (stream.status === 'open') stream.abort(new Error('request cancelled by the buyer'));
          trailer.resolve(undefined);
        }
      }
    }
    return { status: head.status, headers: head.headers, body: body(), trailer: trailer.promise };
  }

  /** Waits for the seller's protocol answer; a refusal makes the peer unreachable. */
  private async acknowledged(
    opened: RequestStream,
    reader: FrameReader,
    headSignal: AbortSignal,
    signal: AbortSignal,
    peerId: PeerId,
  ): Promise<void> {
    try {
      await opened.acknowledged(reader, headSignal);
    } catch (error) {
      if (headSignal.aborted && !signal.aborted) {
        throw new FrameError('timeout', 'no response head in time', error);
      }
      if (!(error instanceof ProtocolRejected)) throw error;
      this.router.markUnreachable?.(peerId, error.message);
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
