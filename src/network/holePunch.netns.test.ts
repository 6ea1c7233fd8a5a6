/**
 * Hole punching for real: two private networks behind NAT and a relay on the "internet" between
 * them (testing/natTopology.ts: network namespaces, veth pairs, nf_tables rules installed over
 * netlink). The buyer reaches the seller through the relay, DCUtR upgrades the connection to a
 * direct one through both NATs (decisions 141, 142), and a request is served on it. Needs root,
 * `ip` and `python3`; without them this test FAILS saying so — it never passes silently.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { HOLE_PUNCH_PORT_ENV } from './holePunch.js';
import {
  buildNatTopology,
  NAT_TOPOLOGY,
  type NatTopology,
  natTopologyMissing,
} from './testing/natTopology.js';

let topology: NatTopology | undefined;
afterAll(() => topology?.stop());

describe('hole punching between two NATs (network namespaces)', () => {
  it('upgrades a relayed buyer-seller connection to a direct one and serves on it', async () => {
    const missing = natTopologyMissing();
    if (missing.length > 0) {
      throw new Error(`this test needs ${missing.join(', ')}; it cannot run on this machine`);
    }
    const nat = buildNatTopology(`svchp${process.pid % 10000}`);
    topology = nat;
    // Seller and buyer punch from port 4002 (decision 142).
    const punch = { [HOLE_PUNCH_PORT_ENV]: '4002' };
    const relay = await nat.startPeer(nat.ns.inet, ['relay', NAT_TOPOLOGY.relay], 30_000);
    const relayAddr = (relay.multiaddrs as string[]).find((a) =>
      a.startsWith(`/ip4/${NAT_TOPOLOGY.relay}/`),
    );
    expect(relayAddr).toBeDefined();
    const seller = await nat.startPeer(nat.ns.hostA, ['seller', relayAddr!], 60_000, punch);
    expect(seller.reachability).toMatchObject({ mode: 'relayed' });
    const buyerArgs = ['buyer', relayAddr!, seller.peerId as string];
    const result = await nat.startPeer(nat.ns.hostB, buyerArgs, 120_000, punch);
    expect(result.error).toBeUndefined();
    expect(result.first).toMatchObject({ status: 200 });
    // The buyer reached the seller through the relay first, then directly at the public address
    // of the seller's router (its LAN address is unreachable from the other LAN), and the
    // second request was served with the direct connection open.
    const opened = result.opened as string[];
    expect(opened[0]).toContain('/p2p-circuit');
    expect(opened.some((a) => a.startsWith(`/ip4/${NAT_TOPOLOGY.routerA}/tcp/4002/`))).toBe(true);
    expect(
      (result.after as string[]).some((a) => a.startsWith(`/ip4/${NAT_TOPOLOGY.routerA}/tcp/`)),
    ).toBe(true);
    expect(result.second).toMatchObject({ status: 200 });
  }, 240_000);
});
