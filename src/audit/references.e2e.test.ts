/**
 * Audit references on a real loopback network (docs/decisions/219-references-the-buyer-trusts.md):
 * a libp2p bootstrap node, four demo sellers of one model, one of them below the buyer's trust
 * gate (as a seller's fresh keys are), and the buyer proxy driven by the official `openai` SDK.
 * References judge the audited seller, so only sellers the buyer's own routing would use are
 * asked: the untrusted one never receives a probe.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBuyerNode } from '../buyer/runBuyerNode.js';
import { startUnpaidBuyer } from '../buyer/testing/discovery.js';
import { scoreAll } from '../buyer/testing/testBuyer.js';
import { normalizeModelName } from '../catalog/index.js';
import { defaultConfig } from '../config/index.js';
import type { SellerHandle } from '../seller/index.js';
import { removeTempDir, tempDir, waitFor } from '../testing/index.js';
import {
  LOOPBACK_AUDITS,
  type LoopbackSellers,
  startLoopbackSellers,
} from './testing/loopbackSellers.js';

const MODEL = 'svc-demo-smart';
const KEY = normalizeModelName(MODEL);

describe('audit references on a loopback network', () => {
  let market: LoopbackSellers;
  let sellers: SellerHandle[] = [];
  let buyer: RunningBuyerNode;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = tempDir('svc-audit-refs-');
    // The untrusted seller is the cheapest: only the trust gate keeps it out of routing.
    market = await startLoopbackSellers(MODEL, [0.5, 3, 3.1, 3.2]);
    sellers = market.sellers;
    const untrusted = sellers[0]!.node.peerId;
    const config = defaultConfig();
    buyer = await startUnpaidBuyer(
      market.network,
      dataDir,
      4,
      {
        ...config.buyer,
        routingPreferences: { ...config.buyer.routingPreferences, minTrustScore: 60 },
        audit: LOOPBACK_AUDITS,
      },
      scoreAll(80, { [untrusted]: 10 }),
    );
  }, 90_000);

  afterAll(async () => {
    await buyer?.stop();
    await market?.stop();
    if (dataDir) removeTempDir(dataDir);
  });

  it('asks only sellers that pass the buyer’s trust gate to answer probes', async () => {
    const openai = new OpenAI({ apiKey: 'x', baseURL: `${buyer.url}/v1`, maxRetries: 0 });
    const [untrusted, ...trusted] = sellers.map((seller) => seller.node.peerId);
    const served = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const { response } = await openai.chat.completions
        .create({ model: MODEL, messages: [{ role: 'user', content: `Ticket ${i}: hello.` }] })
        .withResponse();
      served.add(response.headers.get('x-svc-peer-id')!);
    }
    expect(served.has(untrusted!)).toBe(false);
    // Each answer is followed by a probe of its seller with the two other trusted ones.
    const probes = await waitFor(
      async () => {
        await buyer.service.audits.idle();
        const all = new Map(
          trusted
            .flatMap((peerId) => buyer.service.audits.standing(peerId, KEY)?.probes ?? [])
            .map((probe) => [probe.id, probe]),
        );
        return all.size >= 4 && [...all.values()];
      },
      60_000,
      'probes of the trusted sellers',
    );
    for (const probe of probes) {
      const asked = probe.answers.map((answer) => answer.peerId);
      expect(asked).toHaveLength(3);
      expect(asked).not.toContain(untrusted);
    }
    expect(buyer.service.audits.standing(untrusted!, KEY)).toBeUndefined();
  }, 120_000);
});
