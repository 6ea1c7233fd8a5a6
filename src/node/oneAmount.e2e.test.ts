/**
 * One amount end to end (anvil + libp2p + paying buyer + gateway + openai SDK): what the gateway
 * charges a key equals what the buyer signed to the seller for each request, also when the seller
 * ignores max_tokens (the stream is cut at the cap and paid at most the cap), and the buyer's
 * journal answers for a request after a buyer restart. Run with the buyer in the gateway's process
 * (`svc gateway start`) and with the gateway forwarding to a buyer over HTTP (`--buyer-url`).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessBuyer } from '../buyer/index.js';
import { configSchema } from '../config/index.js';
import { createKey } from '../gateway/admin/createKey.js';
import { type RunningGateway, startGateway } from '../gateway/server/startGateway.js';
import { createStore } from '../gateway/store/createStore.js';
import type { GatewayStore } from '../gateway/store/types.js';
import { IdentityStore } from '../identity/index.js';
import { silentLogger } from '../log/index.js';
import { maxCostOfRequest, parseUsd } from '../money/index.js';
import { decodeRequestRecord, requestRecordPath } from '../protocol/index.js';
import { type FakeUpstream, startFakeUpstream } from '../seller/testing/index.js';
import { waitFor } from '../testing/index.js';
import { PaidNetwork, PRICE } from './testing/paidFixture.js';

/** 400 words: far more than the 20 tokens the requests below allow. */
const LONG_TEXT = Array.from({ length: 400 }, () => 'word').join(' ');

describe.each(['in process', 'remote'] as const)(
  'one amount from the key to the seller, buyer %s',
  (mode) => {
    let net: PaidNetwork;
    let upstream: FakeUpstream;
    let gateway: RunningGateway;
    let store: GatewayStore;
    let peerId: string;
    let keyId: string;
    let client: OpenAI;

    const signed = async () =>
      BigInt(
        (await net.channels()).find((row) => row.seller === `0x${peerId}`)?.signedMicro ?? '0',
      );
    /** Waits until the gateway has settled everything, then compares the ledger and the vouchers. */
    const expectLedgerEqualsVouchers = async () => {
      await waitFor(
        async () => (await store.listReservations(Date.now() + 1)).length === 0,
        10_000,
        'reservations settled',
      );
      expect(await store.ledgerTotal(keyId)).toBe(await signed());
    };

    beforeAll(async () => {
      net = await PaidNetwork.start();
      await net.fundBuyer(5_000_000n);
      // A seller whose upstream ignores max_tokens.
      upstream = await startFakeUpstream({ text: LONG_TEXT, chunkDelayMs: 1 });
      const seller = await net.startSeller(await net.sellerOptions(upstream));
      peerId = seller.node.peerId;
      store = await createStore({ dataDir: net.tempDir('one-amount-gateway') });
      const buyerUrl = mode === 'remote' ? { buyerUrl: net.buyer.url } : {};
      const config = configSchema.parse({ gateway: { port: 0, ...buyerUrl } }).gateway;
      // The gateway shares the buyer's data dir for the control secret, as `svc up` does.
      gateway = await startGateway({
        config,
        dataDir: net.buyerDir,
        store,
        logger: silentLogger(),
        ...(mode === 'in process'
          ? { buyer: { url: net.buyer.url, inProcess: inProcessBuyer(net.buyer.service) } }
          : {}),
      });
      const identities = new IdentityStore(net.buyerDir, {});
      const { key, secret } = await createKey(
        store,
        identities,
        { label: 'money', limits: { total: 1_000_000n } },
        Date.now(),
      );
      keyId = key.id;
      client = new OpenAI({ apiKey: secret, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    }, 180_000);

    afterAll(async () => {
      await gateway?.stop();
      await store?.close();
      await net?.stop();
      await upstream?.close();
    });

    it('charges a whole answer what the buyer signed, at most max_tokens at the price', async () => {
      const before = await signed();
      const { data, response } = await client.chat.completions
        .create({
          model: `${peerId}@gpt-paid`,
          messages: [{ role: 'user', content: 'Say a lot.' }],
          max_tokens: 20,
        })
        .withResponse();
      // Delivered whole (it had arrived), paid at the cap.
      expect(data.choices[0]!.message.content).toBe(LONG_TEXT);
      const reported = parseUsd(response.headers.get('x-svc-estimated-cost-usd') ?? 'missing');
      await waitFor(async () => (await signed()) > before, 10_000, 'voucher signed');
      expect((await signed()) - before).toBe(reported);
      expect(reported).toBeLessThanOrEqual(maxCostOfRequest(40, 20, PRICE));
      await expectLedgerEqualsVouchers();
    }, 60_000);

    it('cuts a stream past the cap with max_cost_reached and charges what was signed', async () => {
      const before = await signed();
      const stream = await client.chat.completions.create({
        model: `${peerId}@gpt-paid`,
        messages: [{ role: 'user', content: 'Say a lot.' }],
        max_tokens: 20,
        stream: true,
      });
      let text = '';
      let failure: unknown;
      try {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      } catch (error) {
        failure = error;
      }
      expect(failure).toBeInstanceOf(OpenAI.APIError);
      expect((failure as InstanceType<typeof OpenAI.APIError>).code).toBe('max_cost_reached');
      expect(text.length).toBeGreaterThan(0);
      expect(text.length).toBeLessThan(LONG_TEXT.length / 4);
      await waitFor(async () => (await signed()) > before, 10_000, 'voucher signed');
      expect((await signed()) - before).toBeLessThanOrEqual(maxCostOfRequest(40, 20, PRICE));
      await expectLedgerEqualsVouchers();
    }, 60_000);

    it('charges a complete stream what was signed, and the record survives a buyer restart', async () => {
      const before = await signed();
      const { data: stream, response } = await client.chat.completions
        .create(
          {
            model: `${peerId}@gpt-paid`,
            messages: [{ role: 'user', content: 'Say a lot.' }],
            max_tokens: 2_000,
            stream: true,
          },
          { headers: { 'x-svc-max-cost-usd': '0.000001', 'x-svc-buyer-identity': 'other' } },
        )
        .withResponse();
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      // A client's own control headers (a tiny cost cap) never reach the buyer: the answer is whole.
      expect(text).toBe(LONG_TEXT);
      await expectLedgerEqualsVouchers();
      const requestId = response.headers.get('x-svc-request-id') ?? 'missing';
      const charged = (await signed()) - before;
      expect(charged).toBeGreaterThan(maxCostOfRequest(0, 300, PRICE));
      await net.restartBuyer();
      const answer = await fetch(`${net.buyer.url}${requestRecordPath(requestId)}`);
      expect(answer.status).toBe(200);
      const record = decodeRequestRecord(await answer.text());
      expect(record).toMatchObject({ completed: true, peerId });
      expect(parseUsd(record.costUsd)).toBe(charged);
    }, 60_000);
  },
);
