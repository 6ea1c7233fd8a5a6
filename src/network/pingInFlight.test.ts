/**
 * libp2p's connection monitor pings every connection every 10 s and aborts the connection when a
 * ping fails. A ping still in flight when the next one starts (a slow or jittery link: its
 * adaptive timeout can pass 10 s) made the second fail at once on the ping protocol's limit of one
 * outbound stream, and the monitor then aborted a live connection with every request on it. Real
 * nodes on loopback: a ping held open stands for the slow one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SvcNode } from './node.js';
import { startLoopbackNode } from './testing/loopback.js';

const PING = '/ipfs/ping/1.0.0';

describe('a ping while another is in flight', () => {
  let a: SvcNode;
  let b: SvcNode;

  beforeAll(async () => {
    a = await startLoopbackNode('client');
    b = await startLoopbackNode('seller');
  });

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
  });

  it('succeeds, and the connection stays open', async () => {
    const connection = await a.libp2p.dial(b.libp2p.getMultiaddrs()[0]!);
    // A ping stream opened and not yet answered: the first ping, still waiting.
    const slow = await connection.newStream(PING);
    const rtt = await a.libp2p.services.ping.ping(b.libp2p.peerId);
    expect(rtt).toBeGreaterThanOrEqual(0);
    expect(connection.status).toBe('open');
    slow.abort(new Error('test over'));
  });
});
