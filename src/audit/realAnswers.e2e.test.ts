/**
 * Audits of real answers on a real loopback network
 * (docs/decisions/221-audits-of-real-answers.md): a libp2p bootstrap node, three demo sellers of
 * one model, and a buyer with `buyer.audit.realAnswers` on. A user's request, whole or streamed,
 * is sent again byte for byte to the two other sellers; the answer the user received, with the
 * seller's receipt, is the audited one, and the record verifies on its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBuyerNode } from '../buyer/runBuyerNode.js';
import { startUnpaidBuyer } from '../buyer/testing/discovery.js';
import { normalizeModelName } from '../catalog/index.js';
import { defaultConfig } from '../config/index.js';
import { requestHash } from '../network/index.js';
import { removeTempDir, tempDir, waitFor } from '../testing/index.js';
import { answerText } from './answerText.js';
import { bundleOf, verifyBundle } from './bundle.js';
import { comparableText } from './statistics.js';
import {
  LOOPBACK_AUDITS,
  type LoopbackSellers,
  startLoopbackSellers,
} from './testing/loopbackSellers.js';
import type { ProbeRecord } from './verdict.js';

const MODEL = 'svc-demo-smart';
const KEY = normalizeModelName(MODEL);

describe('audits of real answers on a loopback network', () => {
  let market: LoopbackSellers;
  let buyer: RunningBuyerNode;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = tempDir('svc-audit-real-');
    market = await startLoopbackSellers(MODEL, [3, 3.1, 3.2]);
    const config = defaultConfig();
    buyer = await startUnpaidBuyer(market.network, dataDir, 3, {
      ...config.buyer,
      audit: { ...LOOPBACK_AUDITS, realAnswers: true },
      presets: { terse: { model: MODEL, system: 'Answer in one short paragraph.', params: {} } },
    });
  }, 90_000);

  afterAll(async () => {
    await buyer?.stop();
    await market?.stop();
    if (dataDir) removeTempDir(dataDir);
  });

  /** Sends `body` as the client wrote it; the seller that served it and the text it received. */
  async function send(body: string, stream: boolean) {
    const response = await fetch(`${buyer.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(response.status).toBe(200);
    const received = await response.text();
    return {
      peerId: response.headers.get('x-svc-peer-id')!,
      text: answerText('chat', received, stream).text,
    };
  }

  /** Replays already looked at. */
  const seen = new Set<string>();
  /** The next replay recorded for an answer `peerId` served, once its references answered. */
  async function replayOf(peerId: string): Promise<ProbeRecord> {
    const replay = await waitFor(
      async () => {
        await buyer.service.audits.idle();
        const probes = buyer.service.audits.standing(peerId, KEY)?.probes ?? [];
        return probes.find((probe) => probe.answers[0]!.peerId === peerId && !seen.has(probe.id));
      },
      60_000,
      'a replay of the answer',
    );
    seen.add(replay.id);
    return replay;
  }

  it('replays a whole and a streamed request byte for byte to the other sellers, judging the answer the client received', async () => {
    for (const stream of [false, true]) {
      // Written as a Python client writes JSON: the replay keeps every byte of it.
      const body = `{"model": "${MODEL}", "messages": [{"role": "user", "content": "Ticket ${stream ? 2 : 1}: the export fails on large files."}], "temperature": 1.0${stream ? ', "stream": true' : ''}}`;
      const served = await send(body, stream);
      const replay = await replayOf(served.peerId);
      expect(replay.id).toMatch(/^replay_/);
      const [audited, ...references] = replay.answers;
      // The audited answer is the one the client received, with the seller's receipt.
      expect(audited!.text).toBe(comparableText(served.text));
      expect(audited!.receipt).toBeDefined();
      // Only the other sellers were asked, each with the exact bytes the audited seller received
      // (its receipt covers them): the client's own for a whole answer, with the usage option
      // the buyer adds to every chat stream for a streamed one.
      expect(references).toHaveLength(2);
      for (const reference of references) {
        expect(reference.peerId).not.toBe(served.peerId);
        const { request } = reference.evidence!;
        const bytes = Buffer.from(request.body, 'base64');
        expect(requestHash('POST', request.path, bytes)).toBe(audited!.receipt!.requestHash);
        if (!stream) expect(bytes.toString()).toBe(body);
      }
      // A whole answer keeps the bytes its receipt covers; a stream keeps its receipt only.
      expect(audited!.evidence === undefined).toBe(stream);
      // The record verifies on its own: every receipt, every text kept with its bytes.
      const standing = buyer.service.audits.standing(served.peerId, KEY)!;
      const report = verifyBundle(JSON.parse(JSON.stringify(bundleOf(served.peerId, standing, 0))));
      expect(report.problems).toEqual([]);
      expect(report.ok).toBe(true);
      expect(report.receipts.missing).toBe(0);
    }
  }, 120_000);

  it('applies a preset to the replayed bytes as to the original: the references get what the seller got', async () => {
    const body = `{"model":"@preset/terse","messages":[{"role":"user","content":"Ticket 3: login loops."}]}`;
    const served = await send(body, false);
    const replay = await replayOf(served.peerId);
    const [audited, ...references] = replay.answers;
    const original = Buffer.from(audited!.evidence!.request.body, 'base64').toString();
    // The seller got the preset's system prompt, and the references got exactly that.
    expect(original).toContain('Answer in one short paragraph.');
    expect(references).toHaveLength(2);
    for (const reference of references) {
      expect(Buffer.from(reference.evidence!.request.body, 'base64').toString()).toBe(original);
    }
  }, 60_000);
});
