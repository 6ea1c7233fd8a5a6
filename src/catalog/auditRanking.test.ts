import { describe, expect, it } from 'vitest';
import { buildCatalog } from './buildCatalog.js';
import { OfferIndex } from './offerIndex.js';
import type { AuditSource, OfferAudit } from './rankOffers.js';
import { staticReputation } from './reputation.js';
import { peerIdFor, peerRecord } from './testing/peerRecord.js';

const CHEAP = peerIdFor('a');
const MID = peerIdFor('b');
const DEAR = peerIdFor('c');

function index(): OfferIndex {
  const seller = (label: string, price: number) =>
    peerRecord({
      peerId: label,
      services: [
        { id: 'llama-3-8b', pricing: { inputUsdPerMillion: price, outputUsdPerMillion: price } },
      ],
    });
  return OfferIndex.fromPeers([seller('a', 1), seller('b', 2), seller('c', 3)]);
}

function audits(verdicts: Record<string, OfferAudit['verdict']>): AuditSource {
  return {
    audit: (peerId) => {
      const verdict = verdicts[peerId];
      return verdict
        ? { verdict, audits: 3, disagreements: verdict === 'pass' ? 0 : 2 }
        : undefined;
    },
  };
}

describe('audit verdicts in ranking', () => {
  const reputation = staticReputation({ [CHEAP]: 80, [MID]: 80, [DEAR]: 80 });

  it('ranks a failed seller after every other, however cheap, with effective reputation 0', () => {
    const [entry] = buildCatalog(index(), {
      reputation,
      audits: audits({ [CHEAP]: 'failed', [MID]: 'suspect', [DEAR]: 'pass' }),
    });
    expect(entry!.peers.map((peer) => peer.peerId)).toEqual([MID, DEAR, CHEAP]);
    expect(entry!.peers.map((peer) => peer.effectiveReputationScore)).toEqual([40, 80, 0]);
    expect(entry!.peers.map((peer) => peer.audit?.verdict)).toEqual(['suspect', 'pass', 'failed']);
  });

  it('leaves ranking alone without verdicts, and shows audit null', () => {
    const [entry] = buildCatalog(index(), { reputation, audits: audits({}) });
    expect(entry!.peers.map((peer) => peer.peerId)).toEqual([CHEAP, MID, DEAR]);
    expect(entry!.peers.every((peer) => peer.audit === null)).toBe(true);
  });
});
