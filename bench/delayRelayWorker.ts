/**
 * The relay of bench/delayRelay.ts, run in a worker thread of its own: the buyer and the seller
 * share the bench's main thread, and a relay there fired its delays late by whatever CPU work
 * they held the event loop with (and by timer granularity), so a round trip through it cost more
 * than the RTT the bench divided by. Here only the relay's own work shares its event loop.
 *
 * It relays 127.0.0.1:<port> to 127.0.0.1:<targetPort>, and 127.0.0.1:<echoPort> to an echo
 * server of its own, both with the same one-way delay: the echo is how the bench measures what a
 * round trip through the relay really costs. A new connection's first bytes wait one round trip
 * more, as TCP's handshake makes a real dialler wait before it can send (`afterHandshake`).
 */
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

export interface RelayWorkerData {
  targetPort: number;
  delayMs: number;
}

/** What the bench asks of the relay. */
export type RelayOrder = { type: 'delay'; ms: number } | { type: 'cut' } | { type: 'close' };

type RelayCommand = RelayOrder & { id: number };

export type RelayReply =
  | { type: 'listening'; port: number; echoPort: number }
  | { type: 'done'; id: number };

type Later = (fn: () => void) => void;

function pipeLater(from: Socket, to: Socket, later: Later): void {
  from.on('data', (chunk: Buffer) => later(() => to.destroyed || to.write(chunk)));
  from.on('end', () => later(() => to.destroyed || to.end()));
}

/**
 * `later` for what a dialler sends on a connection the relay accepted `rttMs` ago or less: held
 * until then. The relay's kernel accepts at once, so without this a dial would never pay TCP's
 * own handshake, the round trip before a real dialler's first byte can leave
 * (docs/decisions/210-a-new-connection-with-an-honest-distance.md). Held bytes go on in the
 * order they came, before anything sent after.
 */
function afterHandshake(later: Later, rttMs: number): Later {
  if (rttMs <= 0) return later;
  let held: (() => void)[] | undefined = [];
  setTimeout(() => {
    const due = held ?? [];
    held = undefined;
    for (const fn of due) later(fn);
  }, rttMs);
  return (fn) => (held ? held.push(fn) : later(fn));
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function main(): Promise<void> {
  const port = parentPort;
  if (port === null) throw new Error('bench/delayRelayWorker.ts runs as a worker thread');
  const init = workerData as RelayWorkerData;
  let delay = init.delayMs;
  // Timers of one duration fire in the order they were set: bytes keep their order.
  const later: Later = (fn) => (delay > 0 ? setTimeout(fn, delay) : setImmediate(fn));
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  };
  const relayTo = (targetPort: () => number) =>
    createServer({ allowHalfOpen: true }, (client) => {
      track(client);
      const target = connect({ port: targetPort(), host: '127.0.0.1', allowHalfOpen: true });
      track(target);
      // A target that is down: the client sees its connection refused, a delay later.
      target.on('error', () => later(() => client.destroy()));
      client.on('error', () => target.destroy());
      client.on('close', () => later(() => target.destroy()));
      target.on('close', () => later(() => client.destroy()));
      pipeLater(client, target, afterHandshake(later, 2 * delay));
      pipeLater(target, client, later);
    });
  const echo = createServer((socket) => {
    track(socket);
    socket.on('data', (chunk) => socket.write(chunk));
  });
  const echoTarget = await listen(echo);
  const relay = relayTo(() => init.targetPort);
  const echoRelay = relayTo(() => echoTarget);
  port.postMessage({
    type: 'listening',
    port: await listen(relay),
    echoPort: await listen(echoRelay),
  } satisfies RelayReply);
  port.on('message', async (command: RelayCommand) => {
    if (command.type === 'delay') delay = command.ms;
    else {
      for (const socket of sockets) socket.destroy();
      if (command.type === 'close') {
        await Promise.all(
          [relay, echoRelay, echo].map((server) => new Promise((resolve) => server.close(resolve))),
        );
      }
    }
    port.postMessage({ type: 'done', id: command.id } satisfies RelayReply);
  });
}

void main();
