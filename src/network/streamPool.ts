/**
 * The buyer's kept `/svc/request/2` streams (decision 190): after a whole answer, a stream with
 * nothing left unread waits here, per connection, for the next request to the same seller, so
 * that request pays neither a stream open nor protocol negotiation. A stream is only ever used
 * by one request at a time; a cancelled or failed request's stream is reset, never kept. The
 * pool is bounded per connection and in all, and forgets a stream as soon as it closes (its
 * connection closing closes it) or the seller ends its side.
 */
import type { Connection, Stream } from '@libp2p/interface';
import type { FrameReader } from './frames.js';

/** A `/svc/request/2` stream and its reader, which lives as long as the stream. */
export interface KeptStream {
  readonly stream: Stream;
  readonly reader: FrameReader;
  readonly connection: Connection;
  /** Requests it has carried. */
  uses: number;
  /** When it was last put back (ms since the epoch). */
  idleSince: number;
}

export interface StreamPoolLimits {
  /** Idle streams kept per connection: about the requests a buyer has in flight to one seller. */
  maxPerConnection: number;
  /** Idle streams kept in all. */
  maxTotal: number;
  /** A stream idle longer is closed rather than used: well under the seller's idle bound. */
  idleMs: number;
  /** Requests per stream, under the seller's bound: the seller then rarely closes one first. */
  maxUses: number;
}

const LIMITS: StreamPoolLimits = {
  maxPerConnection: 64,
  maxTotal: 1024,
  idleMs: 30_000,
  maxUses: 5_000,
};

const noop = () => undefined;

/** True while the stream can carry another request: open both ways, every byte read. */
function reusable(kept: KeptStream): boolean {
  const { stream, connection } = kept;
  return (
    stream.status === 'open' &&
    stream.writeStatus === 'writable' &&
    stream.remoteWriteStatus === 'writable' &&
    connection.status === 'open' &&
    kept.reader.drained
  );
}

export class StreamPool {
  private readonly idle = new Map<Connection, KeptStream[]>();
  private size = 0;
  /** Connections whose peer answered `na` to `/svc/request/2`: `/svc/request/1` from then on. */
  private readonly refused = new WeakSet<Connection>();
  private readonly limits: StreamPoolLimits;

  constructor(limits: Partial<StreamPoolLimits> = {}) {
    this.limits = { ...LIMITS, ...limits };
  }

  /** Whether `connection`'s peer may serve `/svc/request/2` (it has not refused it). */
  mayStream(connection: Connection): boolean {
    return !this.refused.has(connection);
  }

  refuse(connection: Connection): void {
    this.refused.add(connection);
  }

  /** A new kept stream: the pool forgets it as soon as it closes or the seller ends its side. */
  track(stream: Stream, reader: FrameReader, connection: Connection): KeptStream {
    const kept: KeptStream = { stream, reader, connection, uses: 0, idleSince: 0 };
    const forget = () => this.drop(kept);
    stream.addEventListener('close', forget);
    stream.addEventListener('remoteCloseWrite', forget);
    return kept;
  }

  /** The most recently used idle stream on `connection` that can still carry a request. */
  take(connection: Connection): KeptStream | undefined {
    const list = this.idle.get(connection);
    if (list === undefined) return undefined;
    const now = Date.now();
    let found: KeptStream | undefined;
    while (found === undefined && list.length > 0) {
      const kept = list.pop()!;
      this.size--;
      if (reusable(kept) && now - kept.idleSince < this.limits.idleMs) found = kept;
      else kept.stream.close().catch(noop);
    }
    if (list.length === 0) this.idle.delete(connection);
    return found;
  }

  /** `kept` finished a request (its trailer read): back to the pool, or closed. */
  give(kept: KeptStream): void {
    kept.uses++;
    const list = this.idle.get(kept.connection) ?? [];
    if (
      !reusable(kept) ||
      kept.uses >= this.limits.maxUses ||
      list.length >= this.limits.maxPerConnection ||
      this.size >= this.limits.maxTotal
    ) {
      if (kept.stream.status === 'open') kept.stream.close().catch(noop);
      return;
    }
    kept.idleSince = Date.now();
    list.push(kept);
    this.idle.set(kept.connection, list);
    this.size++;
  }

  /**
   * Forgets an idle `kept` that closed or that the seller ended, and closes our side (a stream in
   * use is left to its request, which reads what the seller sent).
   */
  private drop(kept: KeptStream): void {
    const list = this.idle.get(kept.connection);
    const at = list?.indexOf(kept) ?? -1;
    if (list === undefined || at < 0) return;
    list.splice(at, 1);
    this.size--;
    if (list.length === 0) this.idle.delete(kept.connection);
    if (kept.stream.status === 'open') kept.stream.close().catch(noop);
  }
}
