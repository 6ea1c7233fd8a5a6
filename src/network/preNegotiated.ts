/**
 * Inbound request streams negotiated without multistream-select's machinery. A buyer sends the
 * multistream-select proposal (`/multistream/1.0.0`, then the protocol) in the same write as
 * its request (requestStream.ts), and libp2p's `mss.handle` on the seller then read it line by
 * line through a length-prefixed reader, echoed each line as its own write (a message of its
 * own, before the upstream is even called: the buyer had to wake for it), and pushed the rest
 * back onto the stream. Here a yamux stream whose opening data frame starts with exactly that
 * proposal, for a protocol this node serves with `serveRequests`, goes minus the proposal's
 * bytes straight to the request server, past libp2p's inbound path too; on a limited
 * connection or near the protocol's stream limit it is handed to libp2p as pre-negotiated (the
 * path libp2p takes for transports that negotiate protocols themselves), which applies its
 * rules. The request server owes the buyer the echo, exactly the proposal's bytes, and sends it
 * in front of its first write, or as soon as it has to wait for more of the request (a large
 * body is only sent once the buyer has the echo). Anything else, a protocol this node does not
 * serve (whose proposal must be answered `na`) or a proposal split over frames, takes libp2p's
 * path as before (decision 158).
 */
import type { Connection, Stream, StreamMuxer, StreamMuxerFactory } from '@libp2p/interface';

const MULTISTREAM_LINE = new TextEncoder().encode('\x13/multistream/1.0.0\n');
const DATA_FRAME = 0;
const SYN = 1;
/** Longest protocol id a one-byte varint length can carry (with its newline). */
const MAX_SHORT_LINE = 0x7f;

/** Streams handed over pre-negotiated, with the echo their handler owes. */
const owedEchoes = new WeakMap<Stream, Uint8Array>();

interface FrameLike {
  header: { type: number; flag: number; streamID: number; length: number };
  data?: {
    byteLength: number;
    subarray(start?: number, end?: number): Uint8Array;
    sublist(start?: number, end?: number): unknown;
  };
}

interface YamuxInternals {
  handleStreamMessage(frame: FrameLike): void;
  onRemoteStream(stream: Stream): void;
  /** `AbstractStreamMuxer`'s list of open streams and the listener that drops closed ones. */
  streams: Stream[];
  cleanUpStream(stream: Stream): void;
}

/** A protocol served with an owed echo (`serveRequests`). */
export interface PreNegotiatedHandler {
  handler(stream: Stream, connection: Connection): void;
  maxInboundStreams: number;
}

/** One node's pre-negotiated protocols, and how to find the connection of a muxer. */
export interface PreNegotiation {
  readonly handlers: Map<string, PreNegotiatedHandler>;
  /** The node's connections (set once its libp2p exists). */
  connections?: () => Connection[];
}

const connectionOfMuxer = new WeakMap<object, Connection>();
/** Streams taken before their connection existed, by muxer: handed on once it opens. */
const awaiting = new WeakMap<object, ((connection: Connection) => void)[]>();

interface Dispatches {
  safeDispatchEvent(type: 'stream', detail: { detail: Stream }): void;
}

/**
 * Tells the muxers of `connection` (a connection that just opened: the node's 'connection:open')
 * their connection, and hands on the streams that waited for it.
 */
export function connectionOpened(connection: Connection): void {
  const muxer = (connection as Connection & { muxer?: object }).muxer;
  if (muxer === undefined) return;
  connectionOfMuxer.set(muxer, connection);
  const waiting = awaiting.get(muxer);
  if (waiting === undefined) return;
  awaiting.delete(muxer);
  // After the node's other listeners: libp2p lists the connection as the handlers expect.
  queueMicrotask(() => {
    for (const handOn of waiting) handOn(connection);
  });
}

function connectionOf(muxer: object, negotiation: PreNegotiation): Connection | undefined {
  const known = connectionOfMuxer.get(muxer);
  if (known !== undefined) return known;
  const found = negotiation
    .connections?.()
    .find((connection) => (connection as Connection & { muxer?: unknown }).muxer === muxer);
  if (found !== undefined) connectionOfMuxer.set(muxer, found);
  return found;
}

/** The protocol id of a whole proposal at the start of `data` and its length, if there is one. */
function proposalIn(
  data: NonNullable<FrameLike['data']>,
  served: Map<string, PreNegotiatedHandler>,
) {
  const headerLength = MULTISTREAM_LINE.byteLength;
  if (data.byteLength < headerLength + 3) return undefined;
  const start = data.subarray(0, Math.min(data.byteLength, headerLength + 1 + MAX_SHORT_LINE));
  for (let i = 0; i < headerLength; i++) if (start[i] !== MULTISTREAM_LINE[i]) return undefined;
  const lineLength = start[headerLength]!;
  if (lineLength < 2 || lineLength > MAX_SHORT_LINE) return undefined;
  const end = headerLength + 1 + lineLength;
  if (start.byteLength < end || start[end - 1] !== 0x0a) return undefined;
  const protocol = Buffer.from(
    start.buffer,
    start.byteOffset + headerLength + 1,
    lineLength - 1,
  ).toString('latin1');
  if (!served.has(protocol)) return undefined;
  return { protocol, bytes: end, echo: start.slice(0, end) };
}

/** Makes `muxer` hand streams that open with a proposal for a served protocol pre-negotiated. */
function preNegotiate(muxer: StreamMuxer, negotiation: PreNegotiation): void {
  const served = negotiation.handlers;
  const internals = muxer as unknown as Partial<YamuxInternals>;
  const handleStreamMessage = internals.handleStreamMessage;
  const onRemoteStream = internals.onRemoteStream;
  if (typeof handleStreamMessage !== 'function' || typeof onRemoteStream !== 'function') return;
  let pending: { protocol: string; echo: Uint8Array } | undefined;
  internals.handleStreamMessage = (frame) => {
    const { type, flag } = frame.header;
    const proposal =
      type === DATA_FRAME &&
      (flag & SYN) === SYN &&
      served.size > 0 &&
      typeof frame.data?.sublist === 'function'
        ? proposalIn(frame.data, served)
        : undefined;
    if (proposal === undefined) {
      handleStreamMessage.call(muxer, frame);
      return;
    }
    pending = proposal;
    try {
      // The window still counts the proposal's bytes: only the data handed on is shorter.
      handleStreamMessage.call(muxer, {
        header: frame.header,
        data: frame.data!.sublist(proposal.bytes) as FrameLike['data'],
      });
    } finally {
      pending = undefined;
    }
  };
  const direct = (stream: Stream, protocol: string): boolean => {
    const entry = served.get(protocol);
    const connection = entry === undefined ? undefined : connectionOf(muxer, negotiation);
    if (
      entry === undefined ||
      connection?.limits !== undefined ||
      !Array.isArray(internals.streams) ||
      typeof internals.cleanUpStream !== 'function' ||
      internals.streams.length >= entry.maxInboundStreams
    ) {
      return false;
    }
    // What the muxer does before its 'stream' event, then the handler: libp2p's own inbound
    // path (a 10 s AbortSignal.timeout per stream, a peer-store merge, the middleware chain)
    // has nothing left to do for a stream negotiated here. On a limited (relayed) connection,
    // or near the stream limit, libp2p's path applies its rules. The handler runs once the
    // frame's bytes are on the stream.
    internals.streams.push(stream);
    internals.cleanUpStream(stream);
    if (connection !== undefined) {
      queueMicrotask(() => entry.handler(stream, connection));
      return true;
    }
    // A new connection's first stream arrives with the handshake's last message, before libp2p
    // has made the connection: it is handed on when the connection opens (to libp2p's path,
    // as an early stream would have been, if that connection is limited).
    const waiting = awaiting.get(muxer) ?? [];
    waiting.push((opened) => {
      if (opened.limits === undefined) entry.handler(stream, opened);
      else (muxer as unknown as Dispatches).safeDispatchEvent('stream', { detail: stream });
    });
    awaiting.set(muxer, waiting);
    return true;
  };
  internals.onRemoteStream = (stream) => {
    const proposal = pending;
    pending = undefined;
    if (proposal !== undefined) {
      stream.protocol = proposal.protocol;
      owedEchoes.set(stream, proposal.echo);
      if (direct(stream, proposal.protocol)) return;
    }
    onRemoteStream.call(muxer, stream);
  };
}

/**
 * `makeFactory` (e.g. `yamux(init)`) whose muxers pre-negotiate the protocols of `negotiation`
 * (the node's: `serveRequests` adds what it serves).
 */
export function preNegotiating<C>(
  makeFactory: (components: C) => StreamMuxerFactory,
  negotiation: PreNegotiation,
): (components: C) => StreamMuxerFactory {
  return (components) => {
    const factory = makeFactory(components);
    const createStreamMuxer = factory.createStreamMuxer.bind(factory);
    factory.createStreamMuxer = (maConn) => {
      const muxer = createStreamMuxer(maConn);
      preNegotiate(muxer, negotiation);
      return muxer;
    };
    return factory;
  };
}

/** The protocols each node pre-negotiates (see `preNegotiating`), by its libp2p instance. */
export const preNegotiatedProtocols = new WeakMap<object, PreNegotiation>();

/**
 * The multistream-select echo `stream`'s handler owes the buyer, once: `undefined` when libp2p
 * negotiated the stream (and echoed) itself or the echo was already taken.
 */
export function takeOwedEcho(stream: Stream): Uint8Array | undefined {
  const echo = owedEchoes.get(stream);
  if (echo !== undefined) owedEchoes.delete(stream);
  return echo;
}
