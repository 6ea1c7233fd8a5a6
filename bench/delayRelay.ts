/**
 * A userspace TCP relay that adds a set one-way delay in each direction (the kernel here has no
 * netem): what a seller far away looks like to a buyer. Bytes keep their order; a close on one
 * side reaches the other after the same delay. `cut()` drops every relayed connection without a
 * goodbye, as a network that dies does.
 */
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';

export interface DelayRelay {
  port: number;
  /** The one-way delay from now on (connections open at the time included). */
  setDelay(ms: number): void;
  /** Destroys every relayed connection at once (no FIN reaches either side in time). */
  cut(): void;
  close(): Promise<void>;
}

type Later = (fn: () => void) => void;

function pipeLater(from: Socket, to: Socket, later: Later): void {
  from.on('data', (chunk: Buffer) => later(() => to.destroyed || to.write(chunk)));
  from.on('end', () => later(() => to.destroyed || to.end()));
}

/** Relays 127.0.0.1:<port> to 127.0.0.1:`targetPort`, `delayMs` each way. */
export async function startDelayRelay(targetPort: number, delayMs = 0): Promise<DelayRelay> {
  let delay = delayMs;
  // Timers of one duration fire in the order they were set: bytes keep their order.
  const later: Later = (fn) => (delay > 0 ? setTimeout(fn, delay) : setImmediate(fn));
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  };
  const server = createServer({ allowHalfOpen: true }, (client) => {
    track(client);
    const target = connect({ port: targetPort, host: '127.0.0.1', allowHalfOpen: true });
    track(target);
    // A target that is down: the client sees its connection refused, a delay later.
    target.on('error', () => later(() => client.destroy()));
    client.on('error', () => target.destroy());
    client.on('close', () => later(() => target.destroy()));
    target.on('close', () => later(() => client.destroy()));
    pipeLater(client, target, later);
    pipeLater(target, client, later);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    setDelay: (ms) => {
      delay = ms;
    },
    cut: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
