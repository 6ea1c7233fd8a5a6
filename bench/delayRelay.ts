/**
 * A userspace TCP relay that adds a set one-way delay in each direction (the kernel here has no
 * netem): what a seller far away looks like to a buyer. Bytes keep their order; a close on one
 * side reaches the other after the same delay. `cut()` drops every relayed connection without a
 * goodbye, as a network that dies does.
 *
 * The relay runs in a worker thread (bench/delayRelayWorker.ts), not beside the buyer and the
 * seller: there their CPU work delayed its timers, and the network looked slower than the delay
 * it was set to (docs/decisions/210-a-new-connection-with-an-honest-distance.md).
 * `roundTrips(n)` measures what a round trip through it really costs: one byte to an echo server
 * behind the same relay and back, `n` times on one connection.
 */
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { RelayedChunk, RelayOrder, RelayReply, RelayWorkerData } from './delayRelayWorker.js';

export interface DelayRelay {
  port: number;
  /** The one-way delay from now on (connections open at the time included). */
  setDelay(ms: number): Promise<void>;
  /** Destroys every relayed connection at once (no FIN reaches either side in time). */
  cut(): Promise<void>;
  /**
   * `samples` round trips of one byte through the relay, each in milliseconds, to an echo in the
   * relay's thread (`farEnd` 'relay': the network alone, as a ping sees it) or in this thread
   * ('here': the far end wakes up where the seller does, as a request's does).
   */
  roundTrips(samples: number, farEnd?: 'relay' | 'here'): Promise<number[]>;
  /** Starts recording every relayed chunk (`true`) or stops; returns what was recorded till now. */
  trace(on: boolean): Promise<RelayedChunk[]>;
  close(): Promise<void>;
}

/** Round trips of one byte to 127.0.0.1:`port` (an echo) and back, one after another. */
async function echoRoundTrips(port: number, samples: number): Promise<number[]> {
  const socket = connect({ port, host: '127.0.0.1' });
  socket.setNoDelay(true);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const times: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      const start = performance.now();
      const back = new Promise<void>((resolve, reject) => {
        socket.once('data', () => resolve());
        socket.once('close', () => reject(new Error('the echo closed')));
      });
      socket.write(Buffer.of(i & 0xff));
      await back;
      socket.removeAllListeners('close');
      times.push(performance.now() - start);
    }
  } finally {
    socket.destroy();
  }
  return times;
}

/** Relays 127.0.0.1:<port> to 127.0.0.1:`targetPort`, `delayMs` each way, from a worker thread. */
export async function startDelayRelay(targetPort: number, delayMs = 0): Promise<DelayRelay> {
  const hereSockets = new Set<Socket>();
  const hereEcho = createServer((socket) => {
    hereSockets.add(socket);
    socket.on('close', () => hereSockets.delete(socket));
    socket.setNoDelay(true);
    socket.on('error', () => undefined);
    socket.on('data', (chunk) => socket.write(chunk));
  });
  await new Promise<void>((resolve) => hereEcho.listen(0, '127.0.0.1', resolve));
  const worker = new Worker(new URL('./delayRelayWorker.ts', import.meta.url), {
    workerData: {
      targetPort,
      delayMs,
      hereEchoPort: (hereEcho.address() as AddressInfo).port,
    } satisfies RelayWorkerData,
  });
  const waiting = new Map<number, (reply: RelayReply) => void>();
  let nextId = 0;
  const listening = new Promise<{ port: number; echoPort: number; hereEchoPort: number }>(
    (resolve, reject) => {
      worker.once('error', reject);
      worker.on('message', (reply: RelayReply) => {
        if (reply.type === 'listening') resolve(reply);
        else {
          waiting.get(reply.id)?.(reply);
          waiting.delete(reply.id);
        }
      });
    },
  );
  const { port, echoPort, hereEchoPort } = await listening;
  let failure: Error | undefined;
  // A relay that died answers nothing more: what waits for it fails instead of hanging.
  worker.on('error', (error) => {
    failure = error;
  });
  worker.on('exit', () => {
    for (const done of waiting.values()) done({ type: 'done', id: -1 });
    waiting.clear();
  });
  const send = (order: RelayOrder) =>
    new Promise<RelayedChunk[]>((resolve, reject) => {
      if (failure !== undefined) return reject(failure);
      const id = nextId++;
      waiting.set(id, (reply) =>
        failure === undefined
          ? resolve(reply.type === 'done' ? (reply.trace ?? []) : [])
          : reject(failure),
      );
      worker.postMessage({ ...order, id });
    });
  return {
    port,
    setDelay: async (ms) => void (await send({ type: 'delay', ms })),
    cut: async () => void (await send({ type: 'cut' })),
    trace: (on) => send({ type: 'trace', on }),
    roundTrips: (samples, farEnd = 'relay') =>
      echoRoundTrips(farEnd === 'relay' ? echoPort : hereEchoPort, samples),
    close: async () => {
      await send({ type: 'close' });
      await worker.terminate();
      for (const socket of hereSockets) socket.destroy();
      await new Promise((resolve) => hereEcho.close(resolve));
    },
  };
}
