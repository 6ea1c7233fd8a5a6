/**
 * TCP for libp2p with write coalescing. Each muxer frame is encrypted by Noise into a length
 * prefix and a ciphertext that `@libp2p/tcp` writes separately, and one request makes about a
 * dozen small frames (data, window updates, multistream answers, FINs): ~26 `write` syscalls
 * per request. Here the socket is corked on the first write and uncorked by `setImmediate`,
 * i.e. once the event loop's current phase (all the reads, callbacks and promise chains it is
 * running) is done, so everything sent meanwhile leaves in one `writev` — also answers produced
 * a few promise hops later (a stream's ACK and its multistream-select echo, decision 096).
 * Bytes, order and backpressure are unchanged (a corked socket still reports a full buffer, and
 * `drain` follows the flush).
 */
import { Socket } from 'node:net';
import type { ConnectionGater, MultiaddrConnection, Transport, Upgrader } from '@libp2p/interface';
import { type TCPComponents, type TCPOptions, tcp } from '@libp2p/tcp';
import { handingDialledPeer } from './dialledPeer.js';
import { answerNoiseProposalAhead } from './selectAhead.js';

interface SendsData {
  sendData(data: unknown): unknown;
}

/**
 * Work to run just before a connection's pending uncork, by connection: what the layer above
 * queued in the same phase then leaves in the same write (`beforeUncork`).
 */
const beforeUncorks = new WeakMap<object, (() => void)[]>();

/**
 * Runs `flush` right before the uncork `corkWrites` has scheduled for `maConn`, in the same
 * event-loop phase, rather than after it: bytes it writes join the corked ones in one `writev`
 * (Noise's last handshake message and the first request frames, noiseBatch.ts). False (and
 * nothing queued) when no uncork is pending: schedule `flush` as usual.
 */
export function beforeUncork(maConn: unknown, flush: () => void): boolean {
  const queued = typeof maConn === 'object' && maConn !== null && beforeUncorks.get(maConn);
  if (!queued) return false;
  queued.push(flush);
  return true;
}

/** Makes `maConn` coalesce the writes of one tick (when it is a plain TCP connection). */
export function corkWrites(maConn: MultiaddrConnection): void {
  const target = maConn as MultiaddrConnection & Partial<SendsData> & { socket?: unknown };
  const socket = target.socket;
  const sendData = target.sendData;
  if (!(socket instanceof Socket) || typeof sendData !== 'function') return;
  let corked = false;
  const uncork = () => {
    const queued = beforeUncorks.get(target);
    beforeUncorks.delete(target);
    for (const flush of queued ?? []) flush();
    corked = false;
    socket.uncork();
  };
  target.sendData = (data: unknown) => {
    // Already corked: by this tick's first write, or by `sendTogether` for a synchronous batch.
    if (!corked && !socket.destroyed && socket.writableCorked === 0) {
      corked = true;
      socket.cork();
      beforeUncorks.set(target, []);
      setImmediate(uncork);
    }
    return sendData.call(target, data);
  };
}

/**
 * Runs `send` with the socket of `maConn` (when it is a plain TCP connection) corked, so that
 * everything it writes leaves in one `writev` as soon as it returns (noiseBatch.ts).
 */
export function sendTogether<T>(maConn: unknown, send: () => T): T {
  const socket = (maConn as { socket?: unknown } | undefined)?.socket;
  if (!(socket instanceof Socket) || socket.destroyed) return send();
  socket.cork();
  try {
    return send();
  } finally {
    socket.uncork();
  }
}

function corkingUpgrader(upgrader: Upgrader): Upgrader {
  return new Proxy(upgrader, {
    get(target, property, receiver) {
      if (property === 'upgradeOutbound' || property === 'upgradeInbound') {
        const upgrade = Reflect.get(target, property, receiver) as (
          maConn: MultiaddrConnection,
          options: unknown,
        ) => Promise<unknown>;
        return (maConn: MultiaddrConnection, options: unknown) => {
          corkWrites(maConn);
          if (property === 'upgradeOutbound') answerNoiseProposalAhead(maConn);
          return upgrade.call(target, maConn, options);
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

/**
 * `tcp()` whose connections coalesce small writes, and whose dials hand the dialled PeerId to
 * Noise as it is (dialledPeer.ts) and send Noise's first message with its proposal
 * (selectAhead.ts).
 */
export function corkedTcp(init?: TCPOptions): (components: TCPComponents) => Transport {
  const factory = tcp(init);
  return (components) => {
    const transport = factory(components);
    const dial = transport.dial.bind(transport);
    const createListener = transport.createListener.bind(transport);
    // Read at each dial: libp2p sets its components while it creates the node.
    const more = components as { connectionGater?: ConnectionGater; connectionProtector?: unknown };
    const keepAddress = () =>
      typeof more.connectionGater?.denyOutboundConnection === 'function' ||
      more.connectionProtector !== undefined;
    transport.dial = (address, options) =>
      dial(address, {
        ...options,
        upgrader: handingDialledPeer(corkingUpgrader(options.upgrader), keepAddress),
      });
    transport.createListener = (options) =>
      createListener({ ...options, upgrader: corkingUpgrader(options.upgrader) });
    return transport;
  };
}
