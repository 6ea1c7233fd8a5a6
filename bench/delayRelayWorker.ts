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
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';

export interface RelayWorkerData {
  targetPort: number;
  delayMs: number;
  /** An echo server in the thread that started the relay (where the buyer and seller run). */
  hereEchoPort: number;
}

/** What the bench asks of the relay. */
export type RelayOrder =
  | { type: 'delay'; ms: number }
  | { type: 'cut' }
  | { type: 'close' }
  | { type: 'trace'; on: boolean };

/** One relayed chunk: when it arrived, when it was written on, in ms since the epoch. */
export interface RelayedChunk {
  conn: number;
  toTarget: boolean;
  bytes: number;
  arrivedAt: number;
  sentAt: number;
  delayMs: number;
}

type RelayCommand = RelayOrder & { id: number };

export type RelayReply =
  | { type: 'listening'; port: number; echoPort: number; hereEchoPort: number }
  | { type: 'done'; id: number; trace?: RelayedChunk[] };

/** What `Atomics.wait` sleeps on: never notified, so each wait runs to its timeout. */
const SLEEPER = new Int32Array(new SharedArrayBuffer(4));

/** Milliseconds since the epoch, to the microsecond: comparable across threads. */
const nowMs = () => performance.timeOrigin + performance.now();

/**
 * One direction of one relayed connection: what arrived, each piece due one delay after it
 * arrived, written on in order at its due time. The due time is absolute and checked against the
 * clock at each wake-up: a timer set per chunk fires up to a millisecond early or late (Node's
 * timers count whole milliseconds from the loop's cached time), and a streamed answer's last
 * byte waits on its own chunk's timer, while the echo that measures the RTT is a single byte each
 * way (docs/decisions/214-a-warm-request-at-distance.md). One timer per direction wakes up one or
 * two milliseconds before the head is due, and the rest is slept with `Atomics.wait`, exact to
 * the microsecond and without spending CPU (which the bench counts: this thread is in its
 * process). The sockets are not read during that sleep: in a request/answer exchange only one
 * direction is busy at a time.
 */
class Lane {
  private readonly queue: { dueAt: number; arrivedAt: number; bytes: number; fn: () => void }[] =
    [];
  private armed = false;
  private lastDue = 0;
  /** Nothing from this side leaves before TCP's handshake would have let it (`afterHandshake`). */
  private notBefore = 0;

  constructor(
    private readonly delay: () => number,
    private readonly onSent: (bytes: number, arrivedAt: number, sentAt: number) => void,
  ) {}

  /**
   * Charges TCP's handshake: what a dialler sends on a connection the relay accepted less than
   * `rttMs` ago goes on as if it had left at the end of the handshake. The relay's kernel accepts
   * at once, so without this a dial would never pay TCP's own round trip before a real dialler's
   * first byte can leave (docs/decisions/210-a-new-connection-with-an-honest-distance.md).
   */
  afterHandshake(rttMs: number): this {
    this.notBefore = nowMs() + rttMs;
    return this;
  }

  push(fn: () => void, bytes = 0): void {
    const arrivedAt = nowMs();
    const delay = this.delay();
    // Later pieces never overtake earlier ones, even when the delay is lowered meanwhile.
    const dueAt = Math.max(this.lastDue, Math.max(arrivedAt, this.notBefore) + delay);
    this.lastDue = dueAt;
    this.queue.push({ dueAt, arrivedAt, bytes, fn });
    this.arm();
  }

  private arm(): void {
    if (this.armed || this.queue.length === 0) return;
    this.armed = true;
    const wait = this.queue[0]!.dueAt - nowMs();
    const wake = () => {
      this.armed = false;
      this.drain();
    };
    if (wait >= 2) setTimeout(wake, Math.floor(wait) - 1);
    else setImmediate(wake);
  }

  private drain(): void {
    for (;;) {
      const head = this.queue[0];
      if (head === undefined) return;
      const now = nowMs();
      const wait = head.dueAt - now;
      if (wait >= 2) {
        this.arm();
        return;
      }
      // The last two milliseconds at most, slept to the microsecond, with no CPU spent.
      if (wait > 0) Atomics.wait(SLEEPER, 0, 0, wait);
      this.queue.shift();
      head.fn();
      if (head.bytes > 0) this.onSent(head.bytes, head.arrivedAt, nowMs());
    }
  }
}

function pipeLater(from: Socket, to: Socket, lane: Lane): void {
  from.on('data', (chunk: Buffer) =>
    lane.push(() => to.destroyed || to.write(chunk), chunk.length),
  );
  from.on('end', () => lane.push(() => to.destroyed || to.end()));
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
  let trace: RelayedChunk[] | undefined;
  let nextConn = 0;
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  };
  const lane = (conn: number, toTarget: boolean) =>
    new Lane(
      () => delay,
      (bytes, arrivedAt, sentAt) =>
        trace?.push({ conn, toTarget, bytes, arrivedAt, sentAt, delayMs: delay }),
    );
  const relayTo = (targetPort: () => number) =>
    createServer({ allowHalfOpen: true }, (client) => {
      const conn = nextConn++;
      track(client);
      const target = connect({ port: targetPort(), host: '127.0.0.1', allowHalfOpen: true });
      track(target);
      const up = lane(conn, true).afterHandshake(2 * delay);
      const down = lane(conn, false);
      // A target that is down: the client sees its connection refused, a delay later. A close
      // follows what was sent before it, as on a real network.
      target.on('error', () => down.push(() => client.destroy()));
      client.on('error', () => target.destroy());
      client.on('close', () => up.push(() => target.destroy()));
      target.on('close', () => down.push(() => client.destroy()));
      pipeLater(client, target, up);
      pipeLater(target, client, down);
    });
  const echo = createServer((socket) => {
    track(socket);
    socket.on('data', (chunk) => socket.write(chunk));
  });
  const echoTarget = await listen(echo);
  const relay = relayTo(() => init.targetPort);
  const echoRelay = relayTo(() => echoTarget);
  const hereEchoRelay = relayTo(() => init.hereEchoPort);
  port.postMessage({
    type: 'listening',
    port: await listen(relay),
    echoPort: await listen(echoRelay),
    hereEchoPort: await listen(hereEchoRelay),
  } satisfies RelayReply);
  port.on('message', async (command: RelayCommand) => {
    if (command.type === 'delay') delay = command.ms;
    else if (command.type === 'trace') {
      const done = trace;
      trace = command.on ? [] : undefined;
      port.postMessage({ type: 'done', id: command.id, trace: done } satisfies RelayReply);
      return;
    } else {
      for (const socket of sockets) socket.destroy();
      if (command.type === 'close') {
        await Promise.all(
          [relay, echoRelay, hereEchoRelay, echo].map(
            (server) => new Promise((resolve) => server.close(resolve)),
          ),
        );
      }
    }
    port.postMessage({ type: 'done', id: command.id } satisfies RelayReply);
  });
}

void main();
