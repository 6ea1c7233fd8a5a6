/**
 * The hole-punch port (decision 142) on loopback: outbound TCP comes from it, a second connection
 * to the same peer falls back to an ephemeral port, and without it dials use ephemeral ports.
 * Punching through real NATs is src/network/holePunch.netns.test.ts.
 */
import { multiaddr } from '@multiformats/multiaddr';
import { afterEach, describe, expect, it } from 'vitest';
import { applyEnv } from '../config/env.js';
import { validateConfig } from '../config/index.js';
import { HOLE_PUNCH_PORT_ENV, holePunchPort } from './holePunch.js';
import type { SvcNode } from './node.js';
import { startLoopbackNode, waitFor } from './testing/loopback.js';

const PORT = 24_000 + (process.pid % 900);
const nodes: SvcNode[] = [];

afterEach(async () => {
  delete process.env[HOLE_PUNCH_PORT_ENV];
  await Promise.all(nodes.splice(0).map((node) => node.stop()));
});

/** TCP ports the remote ends of `listener`'s connections from `dialer` come from. */
function remotePorts(listener: SvcNode, dialer: SvcNode): number[] {
  return listener.libp2p
    .getConnections(dialer.libp2p.peerId)
    .map((connection) => Number(connection.remoteAddr.getComponents()[1]?.value));
}

describe('hole-punch port', () => {
  it('reads the port from the environment and rejects what is not a port', () => {
    expect(holePunchPort({})).toBeUndefined();
    expect(holePunchPort({ [HOLE_PUNCH_PORT_ENV]: '4002' })).toBe(4002);
    expect(() => holePunchPort({ [HOLE_PUNCH_PORT_ENV]: '70000' })).toThrow(HOLE_PUNCH_PORT_ENV);
    expect(() => holePunchPort({ [HOLE_PUNCH_PORT_ENV]: 'x' })).toThrow('must be a TCP port');
  });

  it('is the config field network.holePunchPort, which SVC_HOLE_PUNCH_PORT overrides', () => {
    const fromFile = validateConfig({ network: { holePunchPort: 4002 } }, 'test');
    expect(fromFile.network.holePunchPort).toBe(4002);
    const fromEnv = validateConfig(applyEnv({}, { [HOLE_PUNCH_PORT_ENV]: '4003' }), 'test');
    expect(fromEnv.network.holePunchPort).toBe(4003);
    expect(() => validateConfig({ network: { holePunchPort: 70_000 } }, 'test')).toThrow(
      /holePunchPort/,
    );
  });

  it('dials from the port, and from an ephemeral port when that connection already exists', async () => {
    const seller = await startLoopbackNode('seller');
    nodes.push(seller);
    process.env[HOLE_PUNCH_PORT_ENV] = String(PORT);
    const buyer = await startLoopbackNode('buyer');
    nodes.push(buyer);
    const address = multiaddr(seller.multiaddrs()[0]!);

    await buyer.libp2p.dial(address);
    await waitFor(() => remotePorts(seller, buyer).length === 1);
    expect(remotePorts(seller, buyer)).toEqual([PORT]);

    // Same local port, same remote address and port: the kernel refuses; the dial still succeeds.
    await buyer.libp2p.dial(address, { force: true });
    await waitFor(() => remotePorts(seller, buyer).length === 2);
    const ports = remotePorts(seller, buyer);
    expect(ports).toContain(PORT);
    expect(ports.filter((port) => port !== PORT)).toHaveLength(1);
  });

  it('dials from ephemeral ports when unset', async () => {
    const seller = await startLoopbackNode('seller');
    const buyer = await startLoopbackNode('buyer');
    nodes.push(seller, buyer);
    await buyer.libp2p.dial(multiaddr(seller.multiaddrs()[0]!));
    await waitFor(() => remotePorts(seller, buyer).length === 1);
    expect(remotePorts(seller, buyer)).not.toEqual([PORT]);
  });
});
