/**
 * The dialled PeerId handed to Noise as the object the dial already holds, not parsed again from
 * the address. libp2p's dial queue dials `<address>/p2p/<id>` and passes its PeerId along; the
 * upgrader then reads the id out of the address and parses it twice (`peerIdFromString`, once to
 * ask the connection gater, once to tell the encrypter whom to expect). For a secp256k1 id each
 * parse validates the embedded compressed key: two square roots modulo p in JavaScript, ~0.5 ms,
 * ~1 ms of every outbound connection (docs/decisions/198-a-dial-without-parsing-its-peer-again.md).
 *
 * Here, when the address ends in the id of the PeerId the dial passes, no gater would be asked
 * about it and no connection protector is configured, the upgrader gets the address without its `/p2p/` part, and the encrypter
 * (`expectingDialledPeer`) gets the PeerId itself as the peer to expect. Noise refuses a remote
 * whose identity key is not that PeerId's key exactly as before, and the connection's address
 * gets the `/p2p/` part back from libp2p (from the proven remote PeerId, the same id). As a second
 * guard, an upgraded connection to any other peer is closed and the dial fails.
 */
import type { ConnectionEncrypter, MultiaddrConnection, PeerId, Upgrader } from '@libp2p/interface';
import { CODE_P2P } from '@multiformats/multiaddr';

/** The PeerId each outbound connection was dialled for, by the connection the upgrader gets. */
const dialled = new WeakMap<object, PeerId>();

interface DialOptions {
  peerId?: unknown;
}

function isPeerId(value: unknown): value is PeerId {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as PeerId).toString === 'function' &&
    typeof (value as PeerId).equals === 'function' &&
    (value as PeerId).publicKey !== undefined
  );
}

/**
 * `upgrader` whose outbound upgrades hand the dialled PeerId over (see above). `keepAddress`
 * answers whether the upgrade must see the address as it is: a connection gater checks outbound
 * connections by peer, or a connection protector stands between the connection and Noise (which
 * then would not find the PeerId). Then nothing changes.
 */
export function handingDialledPeer(upgrader: Upgrader, keepAddress: () => boolean): Upgrader {
  return new Proxy(upgrader, {
    get(target, property, receiver) {
      if (property !== 'upgradeOutbound') return Reflect.get(target, property, receiver);
      const upgrade = Reflect.get(target, property, receiver) as Upgrader['upgradeOutbound'];
      return async (maConn: MultiaddrConnection, options: Parameters<typeof upgrade>[1]) => {
        const expected = (options as DialOptions).peerId;
        const address = maConn.remoteAddr;
        const last = address.getComponents().at(-1);
        if (
          !isPeerId(expected) ||
          last?.code !== CODE_P2P ||
          last.value !== expected.toString() ||
          keepAddress()
        ) {
          return upgrade.call(target, maConn, options);
        }
        dialled.set(maConn, expected);
        maConn.remoteAddr = address.decapsulateCode(CODE_P2P);
        const connection = await upgrade.call(target, maConn, options);
        if (!connection.remotePeer.equals(expected)) {
          const error = new Error('the connection reached a peer other than the one dialled');
          connection.abort(error);
          throw error;
        }
        return connection;
      };
    },
  });
}

type Secure = ConnectionEncrypter['secureOutbound'];

/** `options` with the dialled PeerId as the remote to expect, when libp2p gives none. */
function withDialledPeer(connection: unknown, options: Parameters<Secure>[1]) {
  if (options?.remotePeer !== undefined || typeof connection !== 'object' || connection === null)
    return options;
  const expected = dialled.get(connection);
  return expected === undefined ? options : { ...options, remotePeer: expected };
}

/** `encrypter` expecting, on a connection `handingDialledPeer` upgrades, the dialled peer. */
export function expectingDialledPeer<T extends ConnectionEncrypter>(encrypter: T): T {
  const outbound = encrypter.secureOutbound.bind(encrypter);
  const inbound = encrypter.secureInbound.bind(encrypter);
  encrypter.secureOutbound = ((connection, options) =>
    outbound(connection, withDialledPeer(connection, options))) as Secure;
  encrypter.secureInbound = ((connection, options) =>
    inbound(connection, withDialledPeer(connection, options))) as Secure;
  return encrypter;
}
