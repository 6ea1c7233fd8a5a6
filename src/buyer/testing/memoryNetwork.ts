/**
 * An in-memory PeerDirectory + PeerTransport for fast buyer tests. Its sellers are functions,
 * so a test can script any behaviour: 5xx, 429 with Retry-After, hanging before the head,
 * resets, slow streams — and observe cancellation through the request's AbortSignal.
 * It honours `headTimeoutMs` and `signal` the way the libp2p transport does.
 */
import type { PeerSpec } from '../../catalog/testing/peerRecord.js';
import { peerRecord } from '../../catalog/testing/peerRecord.js';
import type { PeerId } from '../../identity/index.js';
import {
  type KnownPeer,
  type PeerDirectory,
  type PeerTransport,
  type SellerRequest,
  type SellerResponse,
  type SellerTrailer,
  TransportError,
} from '../../network/index.js';

/** What a scripted seller answers. */
export interface ScriptedResponse {
  status: number;
  headers?: Record<string, string>;
  /** Whole body, or chunks (each may be delayed by the script). */
  body?: string | AsyncIterable<string | Uint8Array>;
  trailer?: SellerTrailer;
}

/** A call a seller received, as the test sees it. */
export interface SellerCall {
  peerId: PeerId;
  request: SellerRequest;
  json: Record<string, unknown>;
  signal: AbortSignal;
}

export type SellerScript = (call: SellerCall) => Promise<ScriptedResponse> | ScriptedResponse;

const encoder = new TextEncoder();

/** A JSON reply. */
export function jsonReply(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): ScriptedResponse {
  return {
    status,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  };
}

/** An SSE reply whose events are sent `delayMs` apart (aborting stops it). */
export function sseReply(
  events: string[],
  options: { delayMs?: number; signal?: AbortSignal } = {},
): ScriptedResponse {
  async function* chunks() {
    for (const event of events) {
      if (options.delayMs) await abortableSleep(options.delayMs, options.signal);
      yield event;
    }
  }
  return { status: 200, headers: { 'content-type': 'text/event-stream' }, body: chunks() };
}

/** Resolves after `ms`, or rejects when `signal` aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/** Never answers until the request is aborted (a seller hanging before headers). */
export function hang(call: SellerCall): Promise<ScriptedResponse> {
  return new Promise((_, reject) => {
    call.signal.addEventListener('abort', () => reject(call.signal.reason), { once: true });
  });
}

interface Seller {
  peer: KnownPeer;
  script: SellerScript;
}

/** Sellers in memory; `calls` records every request, `cancelled` every aborted one. */
export class MemoryNetwork {
  readonly calls: SellerCall[] = [];
  readonly cancelled: SellerCall[] = [];
  private readonly sellers = new Map<PeerId, Seller>();
  private version = 0;
  private refreshes = 0;

  /** Adds (or replaces) a seller. */
  addSeller(spec: PeerSpec, script: SellerScript): PeerId {
    const peer = peerRecord(spec);
    this.sellers.set(peer.metadata.peerId, { peer, script });
    this.version++;
    return peer.metadata.peerId;
  }

  setScript(peerId: PeerId, script: SellerScript): void {
    this.sellers.get(peerId)!.script = script;
  }

  setReachable(peerId: PeerId, reachable: boolean): void {
    this.sellers.get(peerId)!.peer.reachable = reachable;
    this.version++;
  }

  callsTo(peerId: PeerId): SellerCall[] {
    return this.calls.filter((call) => call.peerId === peerId);
  }

  get refreshCount(): number {
    return this.refreshes;
  }

  readonly directory: PeerDirectory = {
    list: () => [...this.sellers.values()].map((seller) => seller.peer),
    get: (peerId) => this.sellers.get(peerId)?.peer,
    refresh: async () => {
      this.refreshes++;
      this.version++;
    },
    status: () => {
      const peers = [...this.sellers.values()];
      return {
        dhtNodeCount: peers.length,
        peerCount: peers.length,
        reachablePeerCount: peers.filter((seller) => seller.peer.reachable).length,
        lastRefreshAt: this.version,
      };
    },
  };

  readonly transport: PeerTransport = {
    request: (peerId, request) => this.request(peerId, request),
  };

  private async request(peerId: PeerId, request: SellerRequest): Promise<SellerResponse> {
    const seller = this.sellers.get(peerId);
    if (!seller?.peer.reachable) {
      throw new TransportError('unreachable', peerId, `cannot dial ${peerId}`, {
        beforeHead: true,
      });
    }
    const controller = new AbortController();
    const call: SellerCall = {
      peerId,
      request,
      json: JSON.parse(new TextDecoder().decode(request.body)) as Record<string, unknown>,
      signal: controller.signal,
    };
    this.calls.push(call);
    const onAbort = () => {
      this.cancelled.push(call);
      controller.abort(new TransportError('cancelled', peerId, 'cancelled', { beforeHead: true }));
    };
    if (request.signal?.aborted) onAbort();
    request.signal?.addEventListener('abort', onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      if (request.headTimeoutMs === undefined) return;
      timer = setTimeout(() => {
        const error = new TransportError('timeout', peerId, 'no response head in time', {
          beforeHead: true,
        });
        controller.abort(error);
        reject(error);
      }, request.headTimeoutMs);
    });
    let scripted: ScriptedResponse;
    try {
      scripted = await Promise.race([Promise.resolve(seller.script(call)), timeout]);
    } catch (error) {
      if (error instanceof TransportError) throw error;
      if (controller.signal.aborted) {
        throw new TransportError('cancelled', peerId, 'cancelled', {
          beforeHead: true,
          cause: error,
        });
      }
      throw new TransportError('reset', peerId, `stream reset: ${String(error)}`, {
        beforeHead: true,
        cause: error,
      });
    } finally {
      clearTimeout(timer);
    }
    const { promise: trailer, resolve } = Promise.withResolvers<SellerTrailer | undefined>();
    const source = scripted.body;
    async function* body(): AsyncGenerator<Uint8Array> {
      try {
        if (typeof source === 'string') yield encoder.encode(source);
        else if (source) {
          for await (const chunk of source) {
            if (controller.signal.aborted) throw controller.signal.reason;
            yield typeof chunk === 'string' ? encoder.encode(chunk) : chunk;
          }
        }
        resolve(scripted.trailer);
      } catch (error) {
        resolve({ error: String(error) });
        throw new TransportError(
          controller.signal.aborted ? 'cancelled' : 'reset',
          peerId,
          'stream ended early',
          {
            beforeHead: false,
            cause: error,
          },
        );
      } finally {
        // Abandoned before the end: no usage claim.
        resolve(undefined);
        request.signal?.removeEventListener('abort', onAbort);
      }
    }
    return { status: scripted.status, headers: scripted.headers ?? {}, body: body(), trailer };
  }
}
