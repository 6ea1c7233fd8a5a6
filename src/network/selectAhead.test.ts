/**
 * A dial sends Noise's first message with its `/noise` proposal (selectAhead.ts): a listener
 * receives both before it has answered anything, an answer other than the echo fails the dial,
 * and real nodes still connect (and still refuse a wrong identity: dialledPeer.test.ts,
 * noiseHandshake.test.ts).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { multiaddr } from '@multiformats/multiaddr';
import { afterEach, describe, expect, it } from 'vitest';
import type { SvcNode } from './node.js';
import { startLoopbackNode, waitFor } from './testing/loopback.js';

const line = (text: string) =>
  Buffer.concat([Buffer.of(text.length + 1), Buffer.from(`${text}\n`)]);
const PROPOSAL = Buffer.concat([line('/multistream/1.0.0'), line('/noise')]);
/** Noise XX's first message: a 2-byte length, then the dialler's 32-byte ephemeral key. */
const NOISE_FIRST_MESSAGE_BYTES = 2 + 32;

interface Listener {
  server: Server;
  port: number;
  /** Everything received so far, and the socket it came on. */
  received(): Buffer;
  socket(): Socket | undefined;
}

/** A TCP listener that records what a dialler sends and answers nothing by itself. */
async function silentListener(): Promise<Listener> {
  let received = Buffer.alloc(0);
  let socket: Socket | undefined;
  const server = createServer((accepted) => {
    socket = accepted;
    accepted.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
    });
    accepted.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { server, port: address.port, received: () => received, socket: () => socket };
}

describe('Noise begun with its proposal', () => {
  const nodes: SvcNode[] = [];
  const servers: Server[] = [];
  afterEach(async () => {
    for (const node of nodes.splice(0)) await node.stop();
    for (const server of servers.splice(0)) {
      server.close();
    }
  });

  /** A dial from a new client node to `listener`, as if a seller `peer` listened there. */
  async function dialListener(listener: Listener) {
    const buyer = await startLoopbackNode('client');
    const seller = await startLoopbackNode('seller');
    nodes.push(buyer, seller);
    const address = `/ip4/127.0.0.1/tcp/${listener.port}/p2p/${seller.libp2pPeerId.toString()}`;
    const dial = buyer.libp2p.dial(multiaddr(address), { signal: AbortSignal.timeout(10_000) });
    dial.catch(() => undefined);
    return { buyer, seller, dial };
  }

  it("sends Noise's first message with the proposal, before any answer", async () => {
    const listener = await silentListener();
    servers.push(listener.server);
    const { buyer, dial } = await dialListener(listener);

    await waitFor(
      () => listener.received().byteLength >= PROPOSAL.byteLength + NOISE_FIRST_MESSAGE_BYTES,
      5_000,
      "Noise's first message before any answer",
    );
    const received = listener.received();
    expect(received.subarray(0, PROPOSAL.byteLength).equals(PROPOSAL)).toBe(true);
    expect(received.readUInt16BE(PROPOSAL.byteLength)).toBe(32);
    expect(received.byteLength).toBe(PROPOSAL.byteLength + NOISE_FIRST_MESSAGE_BYTES);

    // A listener that does not speak Noise: the dial fails, and leaves no connection.
    listener.socket()?.write(Buffer.concat([line('/multistream/1.0.0'), line('na')]));
    await expect(dial).rejects.toThrow(/the remote did not accept \/noise/);
    expect(buyer.libp2p.getConnections()).toHaveLength(0);
  });

  it('fails the dial when the answer is anything but the echo, even split in pieces', async () => {
    const listener = await silentListener();
    servers.push(listener.server);
    const { buyer, dial } = await dialListener(listener);
    await waitFor(() => listener.received().byteLength >= PROPOSAL.byteLength, 5_000, 'proposal');

    const wrong = Buffer.from(PROPOSAL);
    wrong[PROPOSAL.byteLength - 2] = 0x78; // "/noisx\n"
    listener.socket()?.write(wrong.subarray(0, 5));
    await new Promise((resolve) => setImmediate(resolve));
    listener.socket()?.write(wrong.subarray(5));

    await expect(dial).rejects.toThrow(/the remote did not accept \/noise/);
    expect(buyer.libp2p.getConnections()).toHaveLength(0);
  });

  it('connects real nodes, whose answers arrive after the message they crossed', async () => {
    const seller = await startLoopbackNode('seller');
    const buyer = await startLoopbackNode('client');
    nodes.push(seller, buyer);

    const connection = await buyer.libp2p.dial(multiaddr(seller.multiaddrs()[0]!));

    expect(connection.remotePeer.equals(seller.libp2pPeerId)).toBe(true);
    expect(connection.encryption).toBe('/noise');
    expect(await buyer.libp2p.services.ping.ping(seller.libp2pPeerId)).toBeGreaterThanOrEqual(0);
  });
});
