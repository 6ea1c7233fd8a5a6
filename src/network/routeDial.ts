/**
 * A dial to a peer whose addresses the caller already holds (the buyer's route to a seller: the
 * addresses of its signed record), without libp2p's dial queue. A dial by PeerId through
 * `libp2p.dial` first writes the addresses to the peer store (so the queue finds them), then the
 * queue reads them back under the store's read lock (which builds an `AbortError` with its stack
 * for every lock), runs a queue job with two combined abort signals, resolves, sorts and filters
 * the addresses, and after the connection records the dial in the peer store again. None of that
 * decides anything here: the caller gives the addresses.
 *
 * What decides whether a connection may exist stays where it is, and is asked the same way:
 *
 * - the connection gater: `denyDialPeer` for the peer, `denyDialMultiaddr` for each address,
 *   before any socket (as the queue asks them); the upgrader asks the rest (outbound connection,
 *   encrypted, upgraded) on the connection, as for any dial;
 * - the addresses: only those given, each with the peer's `/p2p/` id (an address naming another
 *   peer is dropped), each dialled only by a transport that accepts it, and a plain TCP address
 *   only: anything else (a relayed address, another transport) goes through `libp2p.dial` as before;
 * - the identity: the transport and upgrader are libp2p's own, given the PeerId: Noise refuses a
 *   remote without that peer's identity key (src/network/dialledPeer.ts);
 * - the connection manager: the upgrader announces the connection (`connection:open`), so the
 *   manager tracks it, the pruner enforces `maxConnections`, and every listener sees it.
 *
 * Concurrent dials to one peer share one attempt; past MAX_PARALLEL dials at once, or when the
 * node has stopped, the caller takes `libp2p.dial` (docs/decisions/216-a-dial-by-route.md).
 * One connection per peer, whichever path dials first: a dial by route is not started while
 * libp2p's queue dials that peer (the caller's `libp2p.dial` joins the queue's), and a caller
 * with no addresses (a record fetch, a voucher) joins a dial by route under way.
 */
import type { Connection, ConnectionGater, PeerId, Startable } from '@libp2p/interface';
import { CODE_P2P, CODE_TCP, type Multiaddr } from '@multiformats/multiaddr';

/** Dials in flight at once on this path; more wait in libp2p's queue as before. */
const MAX_PARALLEL = 32;

/** The parts of libp2p's components the dialer uses (a test can read what it was given). */
export interface RouteDialerComponents {
  peerId: PeerId;
  connectionGater: ConnectionGater;
  transportManager: {
    dial(address: Multiaddr, options: { signal: AbortSignal; peerId: PeerId }): Promise<Connection>;
    dialTransportForMultiaddr(address: Multiaddr): unknown;
  };
  connectionManager: { getDialQueue(): ReadonlyArray<{ peerId?: PeerId }> };
}

/** The dial was refused before any socket: by the gater, or no address given could be dialled. */
export class RouteDialRefused extends Error {
  override name = 'RouteDialRefused';
}

/** Whether `address` is a direct TCP address (`/ip4|ip6|dns…/tcp/<port>`, optionally `/p2p/`). */
function isDirectTcp(address: Multiaddr): boolean {
  const components = address.getComponents();
  const last = components.at(-1)?.code === CODE_P2P ? components.length - 2 : components.length - 1;
  return last === 1 && components[1]?.code === CODE_TCP;
}

/** The addresses to dial for `peer`, each ending in its `/p2p/` id; undefined: not this path. */
function withPeerId(peer: PeerId, addresses: readonly Multiaddr[]): Multiaddr[] | undefined {
  const id = peer.toString();
  const out: Multiaddr[] = [];
  const seen = new Set<string>();
  for (const address of addresses) {
    if (!isDirectTcp(address)) return undefined;
    const last = address.getComponents().at(-1);
    // An address naming another peer is not this peer's (the dial queue drops it too).
    if (last?.code === CODE_P2P && last.value !== id) continue;
    const full = last?.code === CODE_P2P ? address : address.encapsulate(`/p2p/${id}`);
    const text = full.toString();
    if (seen.has(text)) continue;
    seen.add(text);
    out.push(full);
  }
  return out;
}

/** One dial in flight to a peer, shared by every caller that asked for it meanwhile. */
interface Shared {
  connection: Promise<Connection>;
  /** Aborts the dial once every caller's signal has aborted (or the node stops). */
  controller: AbortController;
  waiting: number;
}

/** `promise`, or the rejection of `signal` when that aborts first. */
function orAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Dials peers by the addresses a caller holds (see above); one per node, as a libp2p service. */
export class RouteDialer implements Startable {
  readonly [Symbol.toStringTag] = 'svc/route-dialer';
  private readonly components: RouteDialerComponents;
  private readonly inFlight = new Map<string, Shared>();
  private shutDown = new AbortController();
  private running = false;

  constructor(components: RouteDialerComponents) {
    this.components = components;
  }

  start(): void {
    this.shutDown = new AbortController();
    this.running = true;
  }

  stop(): void {
    this.running = false;
    this.shutDown.abort(new Error('the node stopped'));
  }

  /**
   * A new connection to `peer` at one of `addresses` (tried in order), or undefined when this
   * path does not apply (no address, an address that is not direct TCP, too many dials at once,
   * libp2p's queue already dialling the peer, the node stopped): then dial with `libp2p.dial`.
   * With no addresses it only joins a dial by route already under way. Throws
   * `RouteDialRefused` when the gater refuses the peer or every address, or no address is this
   * peer's and dialable. A caller whose `signal` aborts stops waiting; the dial goes on while
   * another caller still waits.
   */
  dial(
    peer: PeerId,
    addresses: readonly Multiaddr[],
    signal: AbortSignal,
  ): Promise<Connection> | undefined {
    if (!this.running) return undefined;
    const key = peer.toString();
    let shared = this.inFlight.get(key);
    // A dial every caller gave up on is ending: a new caller starts its own.
    if (shared?.controller.signal.aborted === true) shared = undefined;
    if (shared === undefined) {
      if (addresses.length === 0 || this.inFlight.size >= MAX_PARALLEL) return undefined;
      // The queue's dial would be a second connection: `libp2p.dial` joins it instead.
      const queue = this.components.connectionManager.getDialQueue();
      if (queue.some((pending) => pending.peerId?.equals(peer) === true)) return undefined;
      const targets = withPeerId(peer, addresses);
      if (targets === undefined) return undefined;
      const controller = new AbortController();
      const started: Shared = {
        controller,
        waiting: 0,
        connection: this.attempt(peer, targets, controller.signal).finally(() => {
          if (this.inFlight.get(key) === started) this.inFlight.delete(key);
        }),
      };
      // Awaited by each caller through `orAbort`; never left unhandled when all have gone.
      started.connection.catch(() => undefined);
      this.inFlight.set(key, started);
      shared = started;
    }
    const joined = shared;
    joined.waiting++;
    const leave = () => {
      joined.waiting--;
      if (joined.waiting === 0) joined.controller.abort(signal.reason);
    };
    if (signal.aborted) leave();
    else signal.addEventListener('abort', leave, { once: true });
    return orAbort(joined.connection, signal).finally(() =>
      signal.removeEventListener('abort', leave),
    );
  }

  private async attempt(
    peer: PeerId,
    targets: readonly Multiaddr[],
    signal: AbortSignal,
  ): Promise<Connection> {
    const { connectionGater: gater, transportManager, peerId } = this.components;
    if (peer.equals(peerId)) throw new RouteDialRefused('tried to dial self');
    if ((await gater.denyDialPeer?.(peer)) === true)
      throw new RouteDialRefused('the connection gater refused the peer');
    const allowed: Multiaddr[] = [];
    for (const target of targets) {
      if (transportManager.dialTransportForMultiaddr(target) === undefined) continue;
      if ((await gater.denyDialMultiaddr?.(target)) === true) continue;
      allowed.push(target);
    }
    if (allowed.length === 0) {
      throw new RouteDialRefused(
        `no address of peer ${peer.toString()} may be dialled (${targets.length} given)`,
      );
    }
    const both = AbortSignal.any([signal, this.shutDown.signal]);
    const errors: unknown[] = [];
    for (const target of allowed) {
      try {
        // `peerId` as the dial queue passes it: Noise expects that peer (dialledPeer.ts).
        const connection = await transportManager.dial(target, { signal: both, peerId: peer });
        if (connection.status !== 'open')
          throw new Error('the remote closed the connection during opening');
        return connection;
      } catch (error) {
        errors.push(error);
        if (both.aborted) break;
      }
    }
    if (errors.length === 1) throw errors[0];
    throw new AggregateError(errors, 'every address of the peer failed');
  }
}

/** The libp2p service (`services.routeDialer`). */
export function routeDialer(): (components: RouteDialerComponents) => RouteDialer {
  return (components) => new RouteDialer(components);
}
