/**
 * TCP hole punching through NAT for DCUtR (decision 142).
 *
 * DCUtR upgrades a relayed connection by having both peers dial each other's public address at
 * the same moment (a TCP simultaneous open). That works through NATs only when each peer knows
 * the public address its NAT gives to the socket it punches from. go-libp2p dials from its listen
 * port (SO_REUSEPORT); Node cannot set SO_REUSEPORT on a dialing socket, so js-libp2p dials from
 * ephemeral ports, ignores every observed TCP address in identify, and DCUtR offers only private
 * addresses: it never punches (decision 141).
 *
 * With a hole-punch port configured, a node instead dials every outbound TCP connection from that
 * one local port (libuv binds with SO_REUSEADDR, so many connected sockets can share it while no
 * socket listens on it; a dial whose 4-tuple is taken falls back to an ephemeral port). A NAT that
 * keeps source ports (Linux masquerade and most home routers) then maps every connection from it
 * to the same public port; the node learns that address from what identify peers observe, and
 * offers it — only in DCUtR's exchange, never in its announced addresses, because nothing
 * listens there — so both peers' SYNs cross in their NATs and open one connection.
 */
import type { DCUtRServiceComponents } from '@libp2p/dcutr';
import type { Connection, IdentifyResult, PeerId, Transport, Upgrader } from '@libp2p/interface';
import { type Multiaddr, multiaddr } from '@multiformats/multiaddr';

/** Environment variable naming the local TCP port outbound dials come from (unset: ephemeral). */
export const HOLE_PUNCH_PORT_ENV = 'SVC_HOLE_PUNCH_PORT';

/** The configured hole-punch port, or undefined. Throws on a value that is not a port. */
export function holePunchPort(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const text = env[HOLE_PUNCH_PORT_ENV];
  if (text === undefined || text === '') return undefined;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new Error(`${HOLE_PUNCH_PORT_ENV} must be a TCP port (1-65535), got ${text}`);
  }
  return port;
}

/** Errors of a bind to an address and port some socket already uses for the same peer. */
const PORT_TAKEN = new Set(['EADDRINUSE', 'EADDRNOTAVAIL']);

/**
 * A TCP transport factory whose transports dial from local `port` (from an ephemeral port when
 * that is taken for the same peer); `factory` itself when `port` is undefined.
 */
export function dialingFrom<C>(
  factory: (components: C) => Transport,
  port: number | undefined,
): (components: C) => Transport {
  if (port === undefined) return factory;
  return (components) => {
    const transport = factory(components);
    const dial = transport.dial.bind(transport);
    // @libp2p/tcp passes the dial options on to `net.connect`, `localPort` included.
    transport.dial = async (address, givenOptions) => {
      const options = listeningSide(givenOptions);
      try {
        return await dial(address, { ...options, localPort: port } as typeof options);
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (typeof code !== 'string' || !PORT_TAKEN.has(code)) throw error;
        return dial(address, options);
      }
    };
    return transport;
  };
}

/** DCUtR's protocol: its own stream does not keep a relayed connection open. */
const DCUTR_PROTOCOL = '/libp2p/dcutr';

/**
 * Dial options for the side of a simultaneous open that acts as the listener (DCUtR's
 * `initiator: false`): libp2p's upgrader then negotiates as the listener, but yamux picks its
 * stream ids from the socket's own direction, so that is turned around too — else both ends are
 * yamux clients and the connection fails on its first stream.
 */
function listeningSide<O extends { initiator?: boolean; upgrader: Upgrader }>(options: O): O {
  if (options.initiator !== false) return options;
  const { upgrader } = options;
  return {
    ...options,
    upgrader: overriding(upgrader, {
      upgradeOutbound(connection, upgradeOptions) {
        connection.direction = 'inbound';
        return upgrader.upgradeOutbound(connection, upgradeOptions);
      },
    }),
  };
}

/** Multiaddr codes (multiformats table). */
const IP4 = 4;
const TCP = 6;
const IP6 = 41;
const P2P = 421;

/** `/ip4|ip6/<host>/tcp/<port>` of an observed address when its TCP port is `port`. */
function observedOnPort(address: Multiaddr, port: number): Multiaddr | undefined {
  const [ip, tcp, ...rest] = address.getComponents();
  if (ip === undefined || tcp === undefined || (ip.code !== IP4 && ip.code !== IP6))
    return undefined;
  if (tcp.code !== TCP || tcp.value !== String(port)) return undefined;
  if (rest.some((component) => component.code !== P2P)) return undefined;
  return multiaddr(`/${ip.name}/${ip.value}/tcp/${port}`);
}

/** Replaces some properties of `target`, read through a proxy (libp2p's objects are proxies). */
function overriding<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof T];
      return Reflect.get(object, property, receiver);
    },
  });
}

/**
 * DCUtR's components, changed for hole punching from `port`:
 * - its address manager also lists this node's public address as observed by peers on
 *   connections dialled from `port` (DCUtR sends `getAddresses()` to the other peer);
 * - its "act as the listener" dial (`initiator: false`, the peer that dials second in the
 *   simultaneous open) goes straight to the transport: libp2p's dial queue drops that option, so
 *   both ends would start Noise as initiators on the one TCP connection and fail;
 * - the relayed connection it closes after a successful upgrade closes once its streams are done
 *   (requests already running on it finish there; new ones take the direct connection).
 */
export function holePunchComponents(
  components: DCUtRServiceComponents & { events: EventTarget; peerId: PeerId },
  port: number,
): DCUtRServiceComponents {
  const observed = new Map<string, Multiaddr>();
  components.events.addEventListener('peer:identify', (event) => {
    const address = (event as CustomEvent<IdentifyResult>).detail.observedAddr;
    const clean = address === undefined ? undefined : observedOnPort(address, port);
    if (clean === undefined) return;
    observed.set(clean.toString(), clean.encapsulate(`/p2p/${components.peerId.toString()}`));
  });
  const { addressManager, connectionManager, registrar, transportManager } = components;
  return overriding(components, {
    registrar: overriding(registrar, {
      register(protocol, topology) {
        return registrar.register(protocol, {
          ...topology,
          onConnect: (peer, connection) => topology.onConnect?.(peer, closingWhenIdle(connection)),
        });
      },
      handle(protocol, handler, options) {
        return registrar.handle(
          protocol,
          (stream, connection) => handler(stream, closingWhenIdle(connection)),
          options,
        );
      },
    }),
    addressManager: overriding(addressManager, {
      getAddresses() {
        const own = addressManager.getAddresses();
        const known = new Set(own.map((address) => address.decapsulateCode(P2P).toString()));
        const punched = [...observed].filter(([key]) => !known.has(key)).map(([, value]) => value);
        return [...own, ...punched];
      },
    }),
    connectionManager: overriding(connectionManager, {
      async openConnection(target, options = {}) {
        if (options.initiator !== false || !Array.isArray(target)) {
          return connectionManager.openConnection(target, options);
        }
        let failure: unknown = new Error('no address to dial');
        for (const address of target as Multiaddr[]) {
          try {
            return await transportManager.dial(address, options);
          } catch (error) {
            failure = error;
          }
        }
        throw failure;
      },
    }),
  });
}

/** How often a relayed connection waiting to close checks whether its streams are done. */
const IDLE_CHECK_MS = 250;

/** `connection` whose `close()` returns at once and closes it when only DCUtR streams remain. */
function closingWhenIdle(connection: Connection): Connection {
  return overriding(connection, {
    async close(options) {
      const busy = () =>
        connection.status === 'open' &&
        connection.streams.some((stream) => stream.protocol !== DCUTR_PROTOCOL);
      const attempt = () => {
        if (busy()) {
          setTimeout(attempt, IDLE_CHECK_MS).unref();
          return;
        }
        connection.close().catch(() => connection.abort(new Error('closing relayed connection')));
      };
      options?.signal?.throwIfAborted();
      attempt();
    },
  });
}
