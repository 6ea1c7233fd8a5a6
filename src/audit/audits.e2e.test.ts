/**
 * Audits on a real loopback network: a libp2p bootstrap node, three honest demo sellers of one
 * model and a cheaper seller whose `openai-chat` upstream is the adversary of docs/guide/trust.md
 * "Trust and audits" (answering honestly only what looks like an audit by the old tells), and the buyer
 * proxy, driven by the official `openai` SDK. The evader serves the user's requests until the
 * buyer's audits fail it; then the honest sellers do.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBuyerNode } from '../buyer/runBuyerNode.js';
import { startUnpaidBuyer } from '../buyer/testing/discovery.js';
import { normalizeModelName } from '../catalog/index.js';
import { runCli } from '../cli/testing/runCli.js';
import { defaultConfig, type SellerConfig } from '../config/index.js';
import type { SvcNode } from '../network/index.js';
import {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
} from '../network/testing/loopback.js';
import { type SellerHandle, startSeller } from '../seller/index.js';
import { removeTempDir, tempDir, waitFor } from '../testing/index.js';
import { demoSellerOf } from './testing/demoSellers.js';
import { type EvadingUpstream, startEvadingUpstream } from './testing/evadingUpstream.js';
import { LOOPBACK_AUDITS } from './testing/loopbackSellers.js';

const MODEL = 'svc-demo-smart';
const KEY = normalizeModelName(MODEL);

/** A system prompt and some context, as the buyer's users send them. */
const SYSTEM = 'You are a helpful assistant for the support team. Answer in short paragraphs.';
const CONTEXT = ' Here is some context from the ticket.'.repeat(40);

function evadingSeller(upstream: EvadingUpstream): SellerConfig {
  return {
    displayName: 'evader',
    uploadLimitBytes: 1024 * 1024,
    providers: [
      {
        type: 'openai-chat',
        name: 'openai',
        baseUrl: upstream.baseUrl,
        apiKeyEnv: 'SVC_EVADER_UPSTREAM_KEY',
        services: { [MODEL]: { categories: ['text'] } },
        defaultPricing: { inputUsdPerMillion: 0.5, outputUsdPerMillion: 2 },
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
    pValue: number;
    probes: { answers: { peerId: string; text: string }[]; scores: number[] }[];
  } | null;
}

describe('audits on a loopback network', () => {
  let bootstrap: SvcNode;
  let sellers: SellerHandle[] = [];
  let evader: SellerHandle;
  let upstream: EvadingUpstream;
  let buyer: RunningBuyerNode;
  let dataDir: string;
  let openai: OpenAI;

  beforeAll(async () => {
    process.env.SVC_EVADER_UPSTREAM_KEY = 'upstream-key';
    dataDir = tempDir('svc-audit-e2e-');
    upstream = await startEvadingUpstream(MODEL, 'svc-demo-fast');
    bootstrap = await startLoopbackNode('bootstrap');
    const network = loopbackNetworkConfig({ bootstrap: [bootstrap.multiaddrs()[0]!] });
    const start = (seller: SellerConfig) =>
      startSeller({ identity: randomIdentity(), seller, network });
    evader = await start(evadingSeller(upstream));
    sellers = [
      evader,
      await start(demoSellerOf(MODEL, 'honest')),
      await start(demoSellerOf(MODEL, 'honest')),
      await start(demoSellerOf(MODEL, 'honest')),
    ];
    const config = defaultConfig();
    buyer = await startUnpaidBuyer(network, dataDir, 4, {
      ...config.buyer,
      // Every answer is followed by a probe, spent freely, sent within a fraction of a second.
      audit: LOOPBACK_AUDITS,
    });
    openai = new OpenAI({ apiKey: 'x', baseURL: `${buyer.url}/v1`, maxRetries: 0 });
  }, 90_000);

  afterAll(async () => {
    await buyer?.stop();
    for (const seller of sellers) await seller.stop();
    await bootstrap?.stop();
    await upstream?.close();
    if (dataDir) removeTempDir(dataDir);
  });

  let asked = 0;
  /** One user request; the peer that served it. */
  async function ask(): Promise<string> {
    asked++;
    const { data, response } = await openai.chat.completions
      .create({
        model: MODEL,
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: `Ticket ${asked}: the export fails on large files.${CONTEXT}` },
        ],
      })
      .withResponse();
    expect(data.choices[0]!.message.content).toContain(`Ticket ${asked}`);
    return response.headers.get('x-svc-peer-id')!;
  }

  const auditsOf = (peerId: string) => buyer.service.audits.audit(peerId, KEY);

  it('fails the evader within 20 audits while it substituted the user’s answers; routing then prefers the honest sellers', async () => {
    const cheat = evader.node.peerId;
    const lastProbe = () => buyer.service.audits.standing(cheat, KEY)?.probes.at(-1)?.id;
    for (let round = 0; round < 30 && auditsOf(cheat)?.verdict !== 'failed'; round++) {
      const before = lastProbe();
      // The cheaper evader serves while it is not failed; each answer is followed by a probe.
      expect(await ask()).toBe(cheat);
      await waitFor(
        async () => {
          await buyer.service.audits.idle();
          return lastProbe() !== before;
        },
        60_000,
        'a probe of the evader',
      );
    }
    const verdict = auditsOf(cheat)!;
    expect(verdict.verdict).toBe('failed');
    expect(verdict.audits).toBeLessThanOrEqual(20);
    // Its trick did not find the probes: it served the cheaper model to users and to audits. Every
    // request reached its upstream once. A probe's freshly written words can, by chance, hold one
    // of the old canary subjects ("beeswax", "compound interest"): that is a coin the evader
    // cannot call, so at most a stray honest answer comes from the canary list, never one from
    // the request's shape or parameters.
    expect(upstream.answered.substituted + upstream.answered.honest).toBe(asked + verdict.audits);
    expect(upstream.answered.honest).toBeLessThanOrEqual(2);
    expect(Object.keys(upstream.tells).filter((tell) => tell !== 'canaryList')).toEqual([]);

    const honest = sellers.slice(1).map((seller) => seller.node.peerId);
    for (let i = 0; i < 4; i++) expect(honest).toContain(await ask());
    for (const peerId of honest) expect(auditsOf(peerId)?.verdict).toBe('pass');

    // The verdict and the probes behind it, in /_svc/peers and the catalog.
    const peers = (await (await fetch(`${buyer.url}/_svc/peers`)).json()) as {
      peers: { peerId: string; offers: PeerOffer[] }[];
    };
    const offer = peers.peers.find((peer) => peer.peerId === cheat)!.offers[0]!;
    expect(offer.audit).toMatchObject({ verdict: 'failed' });
    expect(offer.audit!.pValue).toBeLessThanOrEqual(1e-6);
    const probe = offer.audit!.probes.at(-1)!;
    expect(probe.answers.map((answer) => answer.peerId)).toContain(cheat);
    expect(probe.answers.length).toBe(4);
    expect(probe.scores).toHaveLength(4);

    // Audits were paid (estimated here: unpaid development payments) by the same identity as
    // the user's requests, kept apart from their own spend.
    const spent = buyer.service.auditStore.spentToday('default');
    expect(spent.audit).toBeGreaterThan(0n);
    expect(spent.own).toBeGreaterThan(0n);

    const entry = (await openai.models.retrieve(MODEL)) as unknown as {
      peers: {
        peerId: string;
        effectiveReputationScore: number;
        audit: { verdict: string } | null;
      }[];
    };
    expect(entry.peers.at(-1)).toMatchObject({
      peerId: cheat,
      effectiveReputationScore: 0,
      audit: { verdict: 'failed' },
    });
  }, 240_000);

  it('keeps the receipts a verdict rests on: svc audit show, export, and verify on its own', async () => {
    const cheat = evader.node.peerId;
    const shown = await runCli(['--data-dir', dataDir, 'audit', 'show', `0x${cheat}`]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`${cheat}  ${KEY}: failed`);
    expect(shown.stdout).toMatch(/RECEIPTS/);
    expect(shown.stdout).toMatch(/\b4\/4\b/);

    const exported = await runCli(['--data-dir', dataDir, 'audit', 'export', cheat]);
    expect(exported.code).toBe(0);
    const bundle = JSON.parse(exported.stdout) as {
      probes: { answers: { receipt?: unknown; evidence?: { response: { body: string } } }[] }[];
    };
    const answers = bundle.probes.flatMap((probe) => probe.answers);
    expect(answers.every((answer) => answer.receipt && answer.evidence)).toBe(true);
    const file = join(dataDir, 'bundle.json');
    writeFileSync(file, exported.stdout);
    // Checked with no data directory and no buyer: only the bundle.
    const verified = await runCli(['audit', 'verify', file, '--json']);
    expect(verified.code).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({
      ok: true,
      verdictMatches: true,
      receipts: { verified: answers.length, missing: 0 },
      textsFromBytes: answers.length,
      recomputed: { verdict: 'failed' },
    });

    // One byte of one answer changed: its receipt no longer covers it.
    const body = Buffer.from(answers[0]!.evidence!.response.body, 'base64');
    body[body.length - 2] = body[body.length - 2]! ^ 1;
    answers[0]!.evidence!.response.body = body.toString('base64');
    writeFileSync(file, JSON.stringify(bundle));
    const refused = await runCli(['audit', 'verify', file]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('receipt refused (response_mismatch)');
    expect(refused.stdout).toContain('bundle does NOT verify');

    const unknown = await runCli(['--data-dir', dataDir, 'audit', 'show', 'not-a-peer']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('not a peer id');
  }, 60_000);
});
