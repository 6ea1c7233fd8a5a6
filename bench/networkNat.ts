/**
 * The 1 KB-ish demo round trip between a buyer and a seller behind two different NATs (Linux
 * network namespaces, src/network/testing/natTopology.ts): through the relay, and on the direct
 * connection DCUtR punched (decision 142). The first buyer has no hole-punch port, so its
 * connection stays relayed; the second has one and is upgraded before it measures. Needs root,
 * iproute2 and python3; without them the figures are skipped with the reason.
 */
import { HOLE_PUNCH_PORT_ENV } from '../src/network/holePunch.js';
import {
  buildNatTopology,
  NAT_TOPOLOGY,
  natTopologyMissing,
} from '../src/network/testing/natTopology.js';
import { printComparison, printFigure } from './lib.js';

const ROUNDS = '200';

export interface NatRoundTrips {
  relayedP50Ms?: number;
  afterHolePunchP50Ms?: number;
  upgraded?: boolean;
  skipped?: string;
}

export async function natRoundTrips(): Promise<NatRoundTrips> {
  const missing = natTopologyMissing();
  if (missing.length > 0) {
    const skipped = `needs ${missing.join(', ')}`;
    printFigure('round trip through two NATs', Number.NaN, 'ms', skipped);
    return { skipped };
  }
  const nat = buildNatTopology(`svcbn${process.pid % 10000}`);
  try {
    const punch = { [HOLE_PUNCH_PORT_ENV]: '4002' };
    const relay = await nat.startPeer(nat.ns.inet, ['relay', NAT_TOPOLOGY.relay], 30_000);
    const relayAddr = (relay.multiaddrs as string[]).find((a) =>
      a.startsWith(`/ip4/${NAT_TOPOLOGY.relay}/`),
    )!;
    const seller = await nat.startPeer(nat.ns.hostA, ['seller', relayAddr], 60_000, punch);
    const args = ['buyer', relayAddr, seller.peerId as string, ROUNDS];
    const relayed = await nat.startPeer(nat.ns.hostB, args, 120_000);
    const punched = await nat.startPeer(nat.ns.hostB, args, 120_000, punch);
    const relayedP50Ms = relayed.p50Ms as number;
    const afterHolePunchP50Ms = punched.p50Ms as number;
    const upgraded = (punched.after as string[]).some((a) => !a.includes('/p2p-circuit'));
    printComparison(
      '1 KB round trip p50 through NATs (relay vs punched)',
      relayedP50Ms,
      afterHolePunchP50Ms,
      'ms',
    );
    printFigure('upgraded to direct before measuring', upgraded ? 1 : 0, '(1 = yes)');
    return { relayedP50Ms, afterHolePunchP50Ms, upgraded };
  } finally {
    nat.stop();
  }
}
