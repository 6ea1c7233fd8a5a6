/**
 * Receipts end to end (decision 168): anvil, libp2p on loopback, the paying buyer and the
 * official `openai` SDK. An honest seller's receipts verify; sellers whose receipts are bad
 * (signed by another key, over a response altered after it was hashed, or missing) still answer
 * the client, but are paid no more than the buyer's own count, penalised, and counted in the
 * metric and the request record. An audit's answer leaves its receipt and bytes as evidence.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_HEADER } from '../audit/index.js';
import { costOfUsage, formatUsd, parseUsd, type TokenUsage } from '../money/index.js';
import { verifyReceipt } from '../network/index.js';
import { randomIdentity, waitFor } from '../network/testing/loopback.js';
import {
  type FakeUpstream,
  type HostileReceipts,
  hostileReceipts,
  startFakeUpstream,
} from '../seller/testing/index.js';
import type { PaidSellerHandle } from './startSellerNode.js';
import { PaidNetwork, PRICE, TEXT } from './testing/paidFixture.js';

/** Above the buyer's own count of the answer, within the claim tolerance: paid as claimed when the receipt holds. */
const CLAIM: TokenUsage = { inputTokens: 24, cachedInputTokens: 0, outputTokens: 20 };
const ASK = [{ role: 'user' as const, content: 'Say something worth paying for.' }];

interface RequestRecordBody {
  completed?: boolean;
  receipt?: string;
  costUsd: string;
}

describe('receipts anyone can check, end to end', () => {
  let net: PaidNetwork;
  let upstream: FakeUpstream;
  const openai = () => new OpenAI({ apiKey: 'any', baseURL: `${net.buyer.url}/v1`, maxRetries: 0 });

  const startSeller = async (hostile?: HostileReceipts): Promise<PaidSellerHandle> => {
    const identity = randomIdentity();
    const receipts = hostile ? { receipts: hostileReceipts(hostile, identity.privateKey) } : {};
    return net.startSeller(await net.sellerOptions(upstream, { identity, ...receipts }));
  };
  const record = async (requestId: string): Promise<RequestRecordBody> =>
    (await (
      await fetch(`${net.buyer.url}/_svc/requests/${requestId}`)
    ).json()) as RequestRecordBody;
  const receiptCount = async (peerId: string, outcome: string): Promise<number> => {
    const metrics = await (await fetch(`${net.buyer.url}/metrics`)).text();
    const line = metrics
      .split('\n')
      .find((row) =>
        row.startsWith(`svc_buyer_receipts_total{peer_id="${peerId}",outcome="${outcome}"}`),
      );
    return line === undefined ? 0 : Number(line.split(' ').at(-1));
  };
  const channelWith = (peerId: string) =>
    waitFor(
      async () => (await net.channels()).find((row) => row.seller === `0x${peerId}`),
      10_000,
      `channel with ${peerId}`,
    );
  /** One paid chat completion; its request id and what it cost. */
  const ask = async (peerId: string, model = 'gpt-paid', stream = false) => {
    if (stream) {
      const events = await openai()
        .chat.completions.create({
          model: `${peerId}@${model}`,
          messages: ASK,
          stream: true,
        })
        .withResponse();
      let text = '';
      for await (const chunk of events.data) text += chunk.choices[0]?.delta.content ?? '';
      return { text, requestId: events.response.headers.get('x-svc-request-id')! };
    }
    const { data, response } = await openai()
      .chat.completions.create({ model: `${peerId}@${model}`, messages: ASK })
      .withResponse();
    return {
      text: data.choices[0]!.message.content,
      requestId: response.headers.get('x-svc-request-id')!,
      costMicro: parseUsd(response.headers.get('x-svc-estimated-cost-usd')!),
    };
  };

  beforeAll(async () => {
    net = await PaidNetwork.start({ audits: false });
    await net.fundBuyer(5_000_000n);
    upstream = await startFakeUpstream({ text: TEXT, usage: CLAIM });
  }, 120_000);

  afterAll(async () => {
    await net?.stop();
    await upstream?.close();
  });

  it("verifies an honest seller's receipts, whole and streamed, and pays its claim", async () => {
    const honest = await startSeller();
    const peerId = honest.node.peerId;
    const whole = await ask(peerId);
    expect(whole.text).toBe(TEXT);
    expect(whole.costMicro).toBe(costOfUsage(CLAIM, PRICE));
    expect(await record(whole.requestId)).toMatchObject({ receipt: 'verified' });
    const streamed = await ask(peerId, 'gpt-paid', true);
    expect(streamed.text).toBe(TEXT);
    await waitFor(
      async () => (await record(streamed.requestId)).receipt === 'verified',
      5_000,
      'streamed record',
    );
    // Free answers are checked by sample (decision 181), after they reached the client: an
    // unchecked one's record has no receipt verdict. One in 8 by default; 200 tries miss with
    // odds of 2.6e-12.
    let checked: string | undefined;
    for (let tries = 0; tries < 200 && checked === undefined; tries++) {
      const free = await ask(peerId, 'gpt-free');
      expect(free.text).toBe(TEXT);
      const verdict = await waitFor(
        async () => {
          const body = await record(free.requestId);
          return body.completed === true && { receipt: body.receipt };
        },
        5_000,
        'free record',
      );
      checked = verdict.receipt;
    }
    expect(checked).toBe('verified');
    expect(await receiptCount(peerId, 'verified')).toBe(3);
    const row = await channelWith(peerId);
    expect(row.refusedClaims).toBe(0);
  }, 60_000);

  it.each([
    ['another-key', 'bad_signature'],
    ['altered-response', 'response_mismatch'],
    ['none', 'missing'],
  ] as const)(
    'refuses a seller whose receipts are %s (%s): answered, paid its own count, penalised and counted',
    async (hostile, reason) => {
      const seller = await startSeller(hostile);
      const peerId = seller.node.peerId;
      await net.buyer.reputation!.refresh();
      const before = net.buyer.reputation!.score(peerId);
      const paid = await ask(peerId);
      // The client still gets its answer, and the cost it is told is what was paid.
      expect(paid.text).toBe(TEXT);
      expect(paid.costMicro).toBeLessThan(costOfUsage(CLAIM, PRICE));
      expect(await record(paid.requestId)).toMatchObject({
        receipt: reason,
        costUsd: formatUsd(paid.costMicro!),
      });
      const row = await channelWith(peerId);
      expect(row.refusedClaims).toBe(1);
      expect(BigInt(row.signedMicro)).toBe(paid.costMicro);
      // A free answer's refusal is counted once the answer is out; no channel is involved. The
      // seller refused an hour ago or less has every receipt checked (decision 181).
      const free = await ask(peerId, 'gpt-free');
      expect(free.text).toBe(TEXT);
      await waitFor(
        async () => (await record(free.requestId)).receipt === reason,
        5_000,
        'free record',
      );
      expect(await receiptCount(peerId, reason)).toBe(2);
      expect(await receiptCount(peerId, 'verified')).toBe(0);
      // Two refusals, 25 trust points each (an unscored seller becomes 0).
      const penalised = before === undefined ? 0 : Math.max(0, before - 50);
      expect(net.buyer.reputation!.score(peerId)).toBe(penalised);
      await net.stopSeller(seller);
    },
    60_000,
  );

  it("keeps an audit answer's verified receipt with its exact bytes, and nothing for a user's request", async () => {
    const seller = await startSeller();
    const peerId = seller.node.peerId;
    const { service } = net.buyer;
    const body = JSON.stringify({ model: `${peerId}@gpt-paid`, messages: ASK });
    const audit = await fetch(`${net.buyer.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [AUDIT_HEADER]: service.audits.marker },
      body,
    });
    const received = await audit.text();
    expect(audit.status).toBe(200);
    const requestId = audit.headers.get('x-svc-request-id')!;
    const evidence = service.evidence.take(requestId)!;
    expect(evidence).toMatchObject({
      peerId,
      serviceId: 'gpt-paid',
      sellerProtocol: 'openai-chat-completions',
    });
    expect(Buffer.from(evidence.response.body).toString('utf8')).toBe(received);
    expect(JSON.parse(Buffer.from(evidence.request.body).toString('utf8'))).toMatchObject({
      model: 'gpt-paid',
      messages: ASK,
    });
    // Anyone holding the evidence checks it with the receipt module alone.
    expect(
      verifyReceipt(JSON.parse(JSON.stringify(evidence.receipt)), {
        seller: peerId,
        request: evidence.request,
        response: evidence.response,
      }),
    ).toMatchObject({ ok: true });
    expect(service.evidence.take(requestId)).toBeUndefined();
    // A request without the buyer's marker (or with a wrong one) keeps nothing.
    for (const marker of [undefined, 'not-the-marker']) {
      const user = await fetch(`${net.buyer.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(marker ? { [AUDIT_HEADER]: marker } : {}),
        },
        body,
      });
      await user.text();
      expect(service.evidence.take(user.headers.get('x-svc-request-id')!)).toBeUndefined();
    }
    expect(service.evidence.size()).toBe(0);
  }, 60_000);
});
