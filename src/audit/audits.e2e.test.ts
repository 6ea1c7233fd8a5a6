/**
 * Audits on a real loopback network: a libp2p bootstrap node, three demo seller nodes announcing
 * one model (two honest, one cheaper substitute answering with another model's weights), and
 * the buyer proxy, driven by the official `openai` SDK. The substitute serves the user's
 * requests until the buyer's audits fail it; then the honest sellers do.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningBuyerNode, runBuyerNode } from '../buyer/runBuyerNode.js';
import { waitForDiscovery } from '../buyer/testing/discovery.js';
import { scoreAll } from '../buyer/testing/testBuyer.js';
import { normalizeModelName } from '../catalog/index.js';
import { defaultConfig, type SellerConfig } from '../config/index.js';
import { silentLogger } from '../log/index.js';
import type { SvcNode } from '../network/index.js';
import {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
} from '../network/testing/loopback.js';
import { type SellerHandle, startSeller } from '../seller/index.js';
import { removeTempDir, tempDir, waitFor } from '../testing/index.js';

const MODEL = 'svc-demo-smart';
const KEY = normalizeModelName(MODEL);

/** Words around each question, so an answer costs more than the audit it triggers. */
const PADDING = ' Some context for the question.'.repeat(300);

/** A demo seller of MODEL; `weights` set: it serves that model's answers instead. */
function demoSeller(price: number, weights?: string): SellerConfig {
  return {
    displayName: weights ? 'substitute' : 'honest',
    uploadLimitBytes: 1024 * 1024,
    providers: [
      {
        type: 'demo',
        name: 'demo',
        services: {
          [MODEL]: { categories: ['text'], ...(weights ? { upstreamModel: weights } : {}) },
        },
        defaultPricing: { inputUsdPerMillion: price, outputUsdPerMillion: price * 4 },
        maxConcurrency: 16,
      },
    ],
  };
}

interface PeerOffer {
  serviceId: string;
  audit: {
    verdict: string;
    audits: number;
    disagreements: number;
    evidence: {
      kind: string;
      pValue: number | null;
      prompts: string[];
      answers: string[];
      references: string[];
      outcome: string;
    };
  } | null;
}

describe('audits on a loopback network', () => {
  let bootstrap: SvcNode;
  let sellers: SellerHandle[] = [];
  let substitute: SellerHandle;
  let buyer: RunningBuyerNode;
  let dataDir: string;
  let openai: OpenAI;

  beforeAll(async () => {
    dataDir = tempDir('svc-audit-e2e-');
    bootstrap = await startLoopbackNode('bootstrap');
    const network = loopbackNetworkConfig({ bootstrap: [bootstrap.multiaddrs()[0]!] });
    const start = (seller: SellerConfig) =>
      startSeller({ identity: randomIdentity(), seller, network });
    substitute = await start(demoSeller(0.5, 'svc-demo-fast'));
    sellers = [substitute, await start(demoSeller(3)), await start(demoSeller(3))];
    const config = defaultConfig();
    buyer = await runBuyerNode({
      config: {
        ...config,
        network,
        buyer: {
          ...config.buyer,
          // Every answer is followed by an audit, and audits may spend far more than the
          // answers (a handful of answers must pay for a sampled test of 72 canaries).
          audit: { enabled: true, sampleRate: 1, dailyBudgetUsd: 10, maxShareOfSpend: 100 },
        },
      },
      dataDir,
      identity: randomIdentity(),
      logger: silentLogger(),
      port: 0,
      payments: 'unpaid-dev',
      reputation: scoreAll(80),
    });
    await waitForDiscovery(
      buyer,
      () => buyer.directory.list().filter((peer) => peer.reachable).length === 3,
      'three sellers discovered',
    );
    openai = new OpenAI({ apiKey: 'x', baseURL: `${buyer.url}/v1`, maxRetries: 0 });
  }, 90_000);

  afterAll(async () => {
    await buyer?.stop();
    for (const seller of sellers) await seller.stop();
    await bootstrap?.stop();
    if (dataDir) removeTempDir(dataDir);
  });

  let asked = 0;
  /** One user request; the peer that served it. */
  async function ask(): Promise<string> {
    asked++;
    const { data, response } = await openai.chat.completions
      .create({
        model: MODEL,
        messages: [{ role: 'user', content: `question ${asked}.${PADDING}` }],
      })
      .withResponse();
    expect(data.choices[0]!.message.content).toContain(`question ${asked}`);
    return response.headers.get('x-svc-peer-id')!;
  }

  const auditsOf = (peerId: string) => buyer.service.audits.audit(peerId, KEY);

  it('flags the substitute within 20 audits; routing then prefers the honest sellers', async () => {
    const sub = substitute.node.peerId;
    for (let round = 0; round < 20 && auditsOf(sub)?.verdict !== 'failed'; round++) {
      const before = auditsOf(sub)?.audits ?? 0;
      // The cheaper substitute serves while it is not failed; each answer queues its audit.
      expect(await ask()).toBe(sub);
      await waitFor(
        async () => {
          await buyer.service.audits.idle();
          return (auditsOf(sub)?.audits ?? 0) > before;
        },
        60_000,
        'the audit of the substitute',
      );
    }
    const verdict = auditsOf(sub)!;
    expect(verdict.verdict).toBe('failed');
    expect(verdict.audits).toBeLessThanOrEqual(20);

    const honest = sellers.slice(1).map((seller) => seller.node.peerId);
    for (let i = 0; i < 4; i++) expect(honest).toContain(await ask());
    for (const peerId of honest) expect(auditsOf(peerId)?.verdict).not.toBe('failed');

    // The verdict and its evidence, in /_svc/peers and the catalog.
    const peers = (await (await fetch(`${buyer.url}/_svc/peers`)).json()) as {
      peers: { peerId: string; offers: PeerOffer[] }[];
    };
    const offer = peers.peers.find((peer) => peer.peerId === sub)!.offers[0]!;
    expect(offer.audit).toMatchObject({ verdict: 'failed', evidence: { outcome: 'disagree' } });
    expect(offer.audit!.evidence.prompts.length).toBeGreaterThan(0);
    expect(offer.audit!.evidence.answers[0]).toContain('Sampled:');
    expect(offer.audit!.evidence.references.length).toBeGreaterThan(0);
    // A spot check made it suspect; the sampled test over the network failed it.
    expect(offer.audit!.evidence.kind).toBe('sampled');
    expect(offer.audit!.evidence.pValue).toBeLessThanOrEqual(0.005);

    // Audits were paid (estimated here: unpaid development payments) from the audit budget,
    // kept apart from the answers' own spend, in the buyer's data dir.
    const file = JSON.parse(readFileSync(join(dataDir, 'buyer', 'audits.json'), 'utf8')) as {
      auditSpentMicro: string;
      ownSpentMicro: string;
    };
    expect(BigInt(file.auditSpentMicro)).toBeGreaterThan(0n);
    expect(BigInt(file.ownSpentMicro)).toBeGreaterThan(0n);

    const entry = (await openai.models.retrieve(MODEL)) as unknown as {
      peers: {
        peerId: string;
        effectiveReputationScore: number;
        audit: { verdict: string } | null;
      }[];
    };
    expect(entry.peers.at(-1)).toMatchObject({
      peerId: sub,
      effectiveReputationScore: 0,
      audit: { verdict: 'failed' },
    });
  }, 240_000);
});
