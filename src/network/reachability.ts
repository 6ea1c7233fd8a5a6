/**
 * Reaching sellers behind NAT with libp2p's own parts (decision 141): every node that listens
 * can dial and listen on `/p2p-circuit` (circuit relay v2) and upgrades relayed connections to
 * direct ones by hole punching (DCUtR); bootstrap nodes also serve relay reservations. A node
 * behind NAT adds `/p2p-circuit` to `network.listen`: it reserves a slot on a relay it is
 * connected to, and its relay addresses then appear in `multiaddrs()`, its DHT provider record
 * and its metadata answers.
 *
 * Svc relays carry svc traffic without libp2p's default per-connection limits (2 min, 128 KiB),
 * which would cut a paid stream midway; they cap reservations and hop streams instead.
 */
import { circuitRelayServer, circuitRelayTransport } from '@libp2p/circuit-relay-v2';
import { dcutr } from '@libp2p/dcutr';
import type { Connection } from '@libp2p/interface';
import { holePunchComponents } from './holePunch.js';
import type { NodeRole } from './types.js';

/** Reservations one relay holds at once (one per peer behind it). */
export const RELAY_MAX_RESERVATIONS = 256;
/** A reservation lasts this long; the reserving node renews it before it ends. */
export const RELAY_RESERVATION_TTL_MS = 2 * 60 * 60_000;
/** Relayed streams open at once through one relay (all peers together). */
export const RELAY_MAX_HOP_STREAMS = 1024;

/** Transports beside TCP: circuit relay for every node that may dial or be dialled. */
export function reachabilityTransports(role: NodeRole) {
  return role === 'client' ? [] : [circuitRelayTransport({ reservationCompletionTimeout: 10_000 })];
}

/** Services beside identify, ping and the DHT; `holePunchPort` as in holePunch.ts. */
export function reachabilityServices(
  role: NodeRole,
  holePunchPort?: number,
): Record<string, unknown> {
  if (role === 'client') return {};
  const upgrade = dcutr();
  return {
    dcutr:
      holePunchPort === undefined
        ? upgrade
        : (components: Parameters<typeof holePunchComponents>[0]) =>
            upgrade(holePunchComponents(components, holePunchPort)),
    ...(role === 'bootstrap'
      ? {
          relay: circuitRelayServer({
            reservations: {
              maxReservations: RELAY_MAX_RESERVATIONS,
              reservationTtl: RELAY_RESERVATION_TTL_MS,
              // No per-connection duration or data limit: see the file comment and decision 141.
              applyDefaultLimit: false,
            },
            maxInboundHopStreams: RELAY_MAX_HOP_STREAMS,
            maxOutboundStopStreams: RELAY_MAX_HOP_STREAMS,
          }),
        }
      : {}),
  };
}

/** True when `connection` goes through a relay. */
export function isRelayed(connection: Connection): boolean {
  return connection.remoteAddr.toString().includes('/p2p-circuit');
}

/** How this node can be reached, for `/_svc/status` and the CLI. */
export interface Reachability {
  /**
   * `relayed`: it holds relay reservations (`relays` names them) because it expects not to be
   * dialled directly; `public`: it listens on addresses others dial directly; `none`: it
   * listens on nothing (a client that only dials out).
   */
  mode: 'public' | 'relayed' | 'none';
  /** Relay peer ids (libp2p form) this node holds reservations on. */
  relays: string[];
  /** Peers first reached through a relay and now also connected directly (hole punched). */
  holePunchedPeers: number;
  /** Connections that still go through a relay. */
  relayedConnections: number;
}

/** Describes how `node` is reachable right now. */
export function describeReachability(libp2p: {
  getMultiaddrs(): { toString(): string }[];
  getConnections(): Connection[];
}): Reachability {
  const addresses = libp2p.getMultiaddrs().map((address) => address.toString());
  const relays = new Set<string>();
  for (const address of addresses) {
    const at = address.indexOf('/p2p-circuit');
    if (at < 0) continue;
    const relay = address.slice(0, at).split('/p2p/').at(-1);
    if (relay) relays.add(relay);
  }
  const direct = addresses.some((address) => !address.includes('/p2p-circuit'));
  const connections = libp2p.getConnections();
  const relayedPeers = new Set(
    connections.filter(isRelayed).map((connection) => connection.remotePeer.toString()),
  );
  const holePunched = new Set(
    connections
      .filter((connection) => !isRelayed(connection))
      .map((connection) => connection.remotePeer.toString())
      .filter((peer) => relayedPeers.has(peer)),
  );
  return {
    // Holding a reservation means the node expects not to be dialled directly (behind NAT).
    mode: relays.size > 0 ? 'relayed' : direct ? 'public' : 'none',
    relays: [...relays],
    holePunchedPeers: holePunched.size,
    relayedConnections: connections.filter(isRelayed).length,
  };
}

/** One status line: `public`, `relayed via <id>[, <id>]`, `none`, plus hole-punched peers. */
export function formatReachability(reachability: Reachability): string {
  const how =
    reachability.mode === 'relayed'
      ? `relayed via ${reachability.relays.join(', ')}`
      : reachability.mode === 'public'
        ? 'public (listening on directly dialable addresses)'
        : 'none (dials out only)';
  return reachability.holePunchedPeers > 0
    ? `${how}; direct after hole punching with ${reachability.holePunchedPeers} peer(s)`
    : how;
}
