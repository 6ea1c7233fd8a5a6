import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import type { MultiaddrConnection } from '@libp2p/interface';
import { afterEach, describe, expect, it } from 'vitest';
import { beforeUncork, corkWrites } from './corkedTcp.js';

describe('corkWrites', () => {
  const closers: (() => void)[] = [];
  afterEach(() => {
    for (const close of closers.splice(0)) close();
  });

  it('sends the writes of one tick together, bytes and order intact', async () => {
    const received: Buffer[] = [];
    const server = createServer((socket) =>
      socket.on('data', (chunk: Buffer) => received.push(chunk)),
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    const socket: Socket = connect(address.port, '127.0.0.1');
    await once(socket, 'connect');
    closers.push(() => {
      socket.destroy();
      server.close();
    });
    const conn = {
      socket,
      sendData(list: Uint8Array[]) {
        for (const part of list) socket.write(part);
        return { sentBytes: 0, canSendMore: true };
      },
    };
    corkWrites(conn as unknown as MultiaddrConnection);
    conn.sendData([Buffer.from('ab'), Buffer.from('cd')]);
    expect(socket.writableCorked).toBe(1);
    conn.sendData([Buffer.from('ef')]);
    expect(socket.writableCorked).toBe(1);
    // Writes made after the tick's microtasks (an answer computed in a promise chain) still
    // join the same flush; it happens once the event loop's current phase is done.
    await new Promise((resolve) => process.nextTick(resolve));
    await Promise.resolve();
    expect(socket.writableCorked).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(socket.writableCorked).toBe(0);
    conn.sendData([Buffer.from('gh')]);
    const deadline = Date.now() + 5000;
    while (Buffer.concat(received).length < 8 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(Buffer.concat(received).toString()).toBe('abcdefgh');
  });

  it('runs work queued before the pending uncork first, its writes in the same writev', async () => {
    const received: Buffer[] = [];
    const server = createServer((socket) =>
      socket.on('data', (chunk: Buffer) => received.push(chunk)),
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    const socket: Socket = connect(address.port, '127.0.0.1');
    await once(socket, 'connect');
    closers.push(() => {
      socket.destroy();
      server.close();
    });
    const flushes: number[] = [];
    const writev = socket._writev?.bind(socket);
    socket._writev = (chunks, callback) => {
      flushes.push(chunks.length);
      writev?.(chunks, callback);
    };
    const conn = {
      socket,
      sendData(list: Uint8Array[]) {
        for (const part of list) socket.write(part);
        return { sentBytes: 0, canSendMore: true };
      },
    };
    corkWrites(conn as unknown as MultiaddrConnection);
    // Nothing corked yet: the caller schedules its own flush.
    expect(beforeUncork(conn, () => undefined)).toBe(false);
    conn.sendData([Buffer.from('ab')]);
    // An immediate set after the uncork's, as the layer above sets its own.
    const order: string[] = [];
    setImmediate(() => order.push('later immediate'));
    expect(
      beforeUncork(conn, () => {
        order.push('queued');
        socket.write('cd');
      }),
    ).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['queued', 'later immediate']);
    expect(socket.writableCorked).toBe(0);
    expect(flushes).toEqual([2]);
    const deadline = Date.now() + 5000;
    while (Buffer.concat(received).length < 4 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(Buffer.concat(received).toString()).toBe('abcd');
    // Once flushed, nothing is pending any more.
    expect(beforeUncork(conn, () => undefined)).toBe(false);
  });

  it('leaves connections that are not plain sockets alone', () => {
    const conn = { sendData: () => ({ sentBytes: 0, canSendMore: true }) };
    const before = conn.sendData;
    corkWrites(conn as unknown as MultiaddrConnection);
    expect(conn.sendData).toBe(before);
  });
});
