/**
 * Seller side of `/svc/request/1` and `/svc/request/2`: reads and checks each request, hands it
 * to the handler with an AbortSignal that fires when the buyer resets the stream (or a timeout
 * passes), then sends the reply (requestReply.ts). On `/1` the stream carries one request; on
 * `/2` it stays open for the next one, within the bounds of `StreamLimits` (decision 190). A
 * hostile or broken stream only ever aborts that stream. With `receipts`, the request and the
 * reply are hashed as they pass and the trailer carries the answer's signed receipt
 * (src/network/receipts.ts).
 */
import type { Connection, Stream } from '@libp2p/interface';
import { asError } from '../errors/index.js';
import type { PeerId } from '../identity/index.js';
import { type Frame, FrameError, FrameReader } from './frames.js';
import { peerIdFromLibp2p } from './keys.js';
import type { SvcNode } from './node.js';
import { preNegotiatedProtocols } from './preNegotiated.js';
import { REQUEST_PROTOCOL, REQUEST_STREAMS_PROTOCOL } from './protocols.js';
import type { ReceiptIssuer } from './receipts.js';
import {
  type OwedEcho,
  owedEcho,
  type Receipting,
  type RequestHandler,
  readRequest,
  receiptRequestHash,
  sendReply,
  tooLargeReply,
} from './requestReply.js';
import { frameLimit } from './requestWire.js';

export type {
  InboundRequest,
  OutboundReply,
  RequestHandler,
} from './requestReply.js';

/** What a seller allows a `/svc/request/2` stream (decision 190). */
export interface StreamLimits {
  /** Requests one stream carries; the last answer closes it. */
  maxRequests: number;
  /** Time a stream may wait for its next request; then it is reset. */
  idleMs: number;
  /** Streams of one connection waiting for a next request; one more is closed after its answer. */
  maxIdlePerConnection: number;
}

/** The seller's default bounds: above the buyer's pool bounds (streamPool.ts), so a buyer rarely meets them. */
const STREAM_LIMITS: StreamLimits = {
  maxRequests: 10_000,
  idleMs: 60_000,
  maxIdlePerConnection: 128,
};

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
  /**
   * `/svc/request/2` beside `/svc/request/1` (default: the node's `requestStreams`; only for
   * the default protocol), with these bounds in place of the defaults.
   */
  streams?: boolean | Partial<StreamLimits>;
}

export interface RequestServer {
  /** Requests being served right now. */
  active(): number;
  stop(): Promise<void>;
}

/** Registers the request handler on the node. */
export async function serveRequests(
  node: SvcNode,
  handler: RequestHandler,
  options: RequestServerOptions,
): Promise<RequestServer> {
  const protocol = options.protocol ?? REQUEST_PROTOCOL;
  const streams = options.streams ?? node.config.requestStreams;
  const served: Served = {
    node,
    handler,
    options,
    receiveTimeoutMs: options.receiveTimeoutMs ?? node.config.requestHeadTimeoutSeconds * 1000,
    idleTimeoutMs: options.idleTimeoutMs ?? node.config.requestIdleTimeoutSeconds * 1000,
    totalTimeoutMs: options.totalTimeoutMs ?? node.config.requestTotalTimeoutSeconds * 1000,
    limits: { ...STREAM_LIMITS, ...(typeof streams === 'object' ? streams : {}) },
    live: new Set<AbortController>(),
    waiting: new Set<AbortController>(),
  };
  const maxInboundStreams = options.maxInboundStreams ?? 1024;
  const protocols = new Map<string, boolean>([[protocol, false]]);
  if (streams !== false && protocol === REQUEST_PROTOCOL)
    protocols.set(REQUEST_STREAMS_PROTOCOL, true);
  const preNegotiated = preNegotiatedProtocols.get(node.libp2p)?.handlers;
  for (const [id, keep] of protocols) {
    const serve = (stream: Stream, connection: Connection) => {
      serveStream(served, stream, connection, keep).catch((error: unknown) => {
        node.logger.error({ err: asError(error).message }, 'request handler crashed');
        stream.abort(asError(error));
      });
    };
    await node.libp2p.handle(id, serve, { maxInboundStreams });
    // Streams that open with their proposal come straight here (preNegotiated.ts).
    preNegotiated?.set(id, { handler: serve, maxInboundStreams });
  }
  return {
    active: () => served.live.size,
    async stop() {
      for (const id of protocols.keys()) {
        preNegotiated?.delete(id);
        await node.libp2p.unhandle(id).catch(() => undefined);
      }
      for (const controller of [...served.live, ...served.waiting])
        controller.abort(new FrameError('aborted', 'seller stopping'));
    },
  };
}

/** What every stream of one server shares: its handler, limits and the requests in flight. */
interface Served {
  node: SvcNode;
  handler: RequestHandler;
  options: RequestServerOptions;
  receiveTimeoutMs: number;
  idleTimeoutMs: number;
  totalTimeoutMs: number;
  limits: StreamLimits;
  live: Set<AbortController>;
  /** Kept streams' waits for their next request (one per stream, requestServer's `IdleWait`). */
  waiting: Set<AbortController>;
}

/** The request a stream is serving, and its receive deadline, for the stream's listeners. */
interface Current {
  request?: AbortController;
  receiving?: ReceiveDeadline;
}

/**
 * Serves one stream: one request (`keep` false: `/svc/request/1`) or requests one after
 * another (`/svc/request/2`). Any failure aborts the handler's signal and resets only this
 * stream.
 */
async function serveStream(
  served: Served,
  stream: Stream,
  connection: Connection,
  keep: boolean,
): Promise<void> {
  const current: Current = {};
  const echo = owedEcho(stream);
  // A large body only follows once the buyer has the echo: send it before waiting for bytes.
  const reader = new FrameReader(stream, undefined, () => {
    echo.send();
    current.receiving?.arm();
  });
  stream.inactivityTimeout = served.idleTimeoutMs;
  stream.addEventListener('close', (event) => {
    if (event.error !== undefined || stream.status !== 'closed') {
      current.request?.abort(
        new FrameError('reset', `buyer closed the stream: ${event.error?.message ?? 'reset'}`),
      );
    }
  });
  let idle: IdleWait | undefined;
  try {
    const buyer = peerIdFromLibp2p(connection.remotePeer);
    let next: Frame | undefined;
    for (let count = 1; ; count++) {
      const last = !keep || count >= served.limits.maxRequests;
      const open = await serveRequest(served, stream, reader, buyer, current, echo, next, last);
      if (!open) return;
      idle ??= new IdleWait(served);
      next = await nextHead(served, stream, reader, connection, idle);
      if (next === undefined) return;
    }
  } catch (error) {
    served.node.logger.debug({ err: asError(error).message }, 'request stream failed');
    stream.abort(asError(error));
  } finally {
    idle?.dispose();
  }
}

/**
 * One request, read within the receive timeout and answered (or a 413) within the total one.
 * True when the stream stays open for another.
 */
async function serveRequest(
  served: Served,
  stream: Stream,
  reader: FrameReader,
  buyer: PeerId | undefined,
  current: Current,
  echo: OwedEcho,
  head: Frame | undefined,
  last: boolean,
): Promise<boolean> {
  const controller = new AbortController();
  const signal = controller.signal;
  served.live.add(controller);
  current.request = controller;
  const total = setTimeout(
    () => controller.abort(new FrameError('timeout', 'request took too long')),
    served.totalTimeoutMs,
  );
  const receiving = receiveDeadline(served.receiveTimeoutMs, controller);
  current.receiving = receiving;
  try {
    if (buyer === undefined) throw new FrameError('protocol', 'remote key is not secp256k1');
    const uploadLimit = served.options.uploadLimitBytes();
    const request = await readRequest(reader, uploadLimit, signal, head).finally(receiving.clear);
    if ('tooLarge' in request) {
      // The body was not read: the stream cannot carry another request.
      await sendReply(
        stream,
        tooLargeReply(uploadLimit),
        signal,
        echo,
        true,
        undefined,
        served.idleTimeoutMs,
      );
      return false;
    }
    const issue = served.options.receipts;
    const { method, path, headers, payment } = request.head;
    const receipting: Receipting | undefined = issue && {
      issue,
      seller: served.node.peerId,
      buyer,
      request: { method, path, body: request.body },
    };
    const replied = served.handler({
      peerId: buyer,
      method,
      path,
      headers,
      body: request.body,
      ...(payment !== undefined ? { payment } : {}),
      signal,
    });
    // The request hash is made once this turn's work is done (the handler has sent its upstream
    // call by then, and waits): off the answer's path. Nothing writes to a request's body.
    if (receipting !== undefined) setImmediate(receiptRequestHash, receipting);
    const reply = await replied;
    await sendReply(stream, reply, signal, echo, last, receipting, served.idleTimeoutMs);
    return !last;
  } catch (error) {
    if (!signal.aborted) controller.abort(asError(error));
    throw error;
  } finally {
    clearTimeout(total);
    served.live.delete(controller);
    current.request = undefined;
    current.receiving = undefined;
  }
}

/** Kept streams of each connection waiting for a next request. */
const idleStreams = new WeakMap<Connection, { count: number }>();

/**
 * A kept stream's wait for its next request, bounded by the stream limits' `idleMs`: one
 * controller and one timer for the stream's whole life, the timer re-armed (`refresh`) as each
 * wait starts, where a controller and a timer per request cost the seller both on every answer.
 * A timer that fires between waits does nothing; one that fires during a wait ends it.
 */
class IdleWait {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private waiting = false;

  constructor(private readonly served: Served) {
    this.timer = setTimeout(() => {
      if (this.waiting)
        this.controller.abort(new FrameError('timeout', 'no next request on the stream in time'));
    }, served.limits.idleMs);
    this.timer.unref();
    // Stopping the server ends the wait (and a stream between two requests, at its next wait).
    served.waiting.add(this.controller);
  }

  /** Starts a wait: the signal aborts once it has lasted `idleMs`. */
  start(): AbortSignal {
    this.waiting = true;
    this.timer.refresh();
    return this.controller.signal;
  }

  stop(): void {
    this.waiting = false;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.served.waiting.delete(this.controller);
  }
}

/**
 * The head of a kept stream's next request, read within the stream's idle time (a stranger's
 * stream costs a bounded wait and at most one head's bytes before any work); undefined when the
 * buyer closed the stream or the connection has enough idle streams (this one is then closed).
 */
async function nextHead(
  served: Served,
  stream: Stream,
  reader: FrameReader,
  connection: Connection,
  wait: IdleWait,
): Promise<Frame | undefined> {
  let idle = idleStreams.get(connection);
  if (idle === undefined) {
    idle = { count: 0 };
    idleStreams.set(connection, idle);
  }
  if (idle.count >= served.limits.maxIdlePerConnection) {
    await stream.close();
    return undefined;
  }
  idle.count++;
  try {
    const frame = await reader.read(frameLimit, wait.start());
    if (frame === undefined) await stream.close();
    return frame;
  } finally {
    idle.count--;
    wait.stop();
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
