/**
 * A buyer killed (-9) mid-stream, everything real: anvil, libp2p, a paid seller, `svc buyer start`
 * as a child process on the buyer's data dir, the gateway in front. The key is charged what was
 * delivered, not the reservation: the gateway keeps the reservation held while the buyer is down;
 * the restarted buyer pays the stream's journaled progress with a late voucher and closes its
 * record at that amount (docs/decisions/154-late-voucher-after-a-crash.md); recovery settles the
 * reservation with it — ledger = the seller's voucher increment, and the key keeps working.
 */
import OpenAI from 'openai';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../config/index.js';
import { createKey } from '../gateway/admin/createKey.js';
import { recoverReservations } from '../gateway/server/recoverReservations.js';
import { type RunningGateway, startGateway } from '../gateway/server/startGateway.js';
import { createStore } from '../gateway/store/createStore.js';
import type { GatewayStore } from '../gateway/store/types.js';
import { IdentityStore } from '../identity/index.js';
import { silentLogger } from '../log/index.js';
import { costOfUsage, formatUsd } from '../money/index.js';
import { decodeRequestRecord, requestRecordPath } from '../protocol/index.js';
import { type FakeUpstream, startFakeUpstream } from '../seller/testing/index.js';
import { waitFor } from '../testing/index.js';
import {
  type BuyerProcess,
  configureBuyerDir,
  discoverFrom,
  startBuyerProcess,
} from './testing/buyerProcess.js';
import { PaidNetwork, PRICE } from './testing/paidFixture.js';

/** 400 words, one event each, 30 ms apart: a stream of about 12 s. */
const LONG_TEXT = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');

describe('a buyer killed mid-stream', () => {
  let net: PaidNetwork;
  let upstream: FakeUpstream;
  let buyer: BuyerProcess | undefined;
  let gateway: RunningGateway;
  let store: GatewayStore;
  let peerId: string;
  /** The seller's cumulative voucher amount on its channel with the buyer. */
  let sellerVouchered: () => bigint;
  let keyId: string;
  let secret: string;

  const signed = async (url: string) => {
    const reply = await fetch(`${url}/_svc/channels`);
    const { channels } = (await reply.json()) as {
      channels: Array<{ seller: string; signedMicro: string }>;
    };
    return BigInt(channels.find((row) => row.seller === `0x${peerId}`)?.signedMicro ?? '0');
  };

  beforeAll(async () => {
    net = await PaidNetwork.start();
    await net.fundBuyer(5_000_000n);
    upstream = await startFakeUpstream({ text: LONG_TEXT, chunkDelayMs: 30 });
    const seller = await net.startSeller(await net.sellerOptions(upstream));
    peerId = seller.node.peerId;
    sellerVouchered = () =>
      seller.payments!.channels().reduce((sum, channel) => sum + channel.voucherMicro, 0n);
    // From here the buyer runs as `svc buyer start` on the same data dir, so it can be killed.
    await net.stopBuyer();
    configureBuyerDir(net);
    buyer = await startBuyerProcess(net.buyerDir);
    await discoverFrom(buyer.url, peerId);
    store = await createStore({ dataDir: net.tempDir('crash-gateway') });
    const config = configSchema.parse({ gateway: { port: 0, buyerUrl: buyer.url } }).gateway;
    // The gateway shares the buyer's data dir for the control secret, as `svc up` does.
    gateway = await startGateway({ config, dataDir: net.buyerDir, store, logger: silentLogger() });
    const identities = new IdentityStore(net.buyerDir, {});
    const created = await createKey(
      store,
      identities,
      { label: 'crash', limits: { total: 1_000_000n } },
      Date.now(),
    );
    keyId = created.key.id;
    secret = created.secret;
  }, 240_000);

  afterAll(async () => {
    await gateway?.stop();
    await store?.close();
    await buyer?.stop();
    await net?.stop();
    await upstream?.close();
  });

  it('charges what was delivered, not the reservation, and the seller is paid exactly that', async () => {
    const before = await signed(buyer!.url);
    const sellerBefore = sellerVouchered();
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: `${peerId}@gpt-paid`,
        messages: [{ role: 'user', content: 'Say a lot.' }],
        max_tokens: 2_000,
        stream: true,
      }),
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-svc-request-id') ?? 'missing';
    const [held] = await store.listReservations(Date.now() + 1);
    expect(held?.id).toBe(requestId);
    const reservation = held!.amountMicro;
    // Read part of the answer, wait until the buyer journaled what it delivered (at most every
    // 250 ms), then kill -9 it in the middle of the stream.
    const reader = response.body!.getReader();
    let received = '';
    const decoder = new TextDecoder();
    const readWords = async (count: number) => {
      while ((received.match(/word\d+/g) ?? []).length < count) {
        const step = await reader.read();
        if (step.done) break;
        received += decoder.decode(step.value);
      }
    };
    await readWords(20);
    expect(received).toContain('word19');
    const journaled = await waitFor(async () => {
      const lookup = await fetch(`${buyer!.url}${requestRecordPath(requestId)}`);
      const record = decodeRequestRecord(await lookup.text());
      return !record.completed && record.usage.outputTokens > 0 && record;
    }, 10_000);
    await buyer!.kill();
    await reader.read().then(
      function drain(step): Promise<void> | undefined {
        return step.done ? undefined : reader.read().then(drain);
      },
      () => undefined,
    );
    // The buyer cannot say what the request cost: the reservation stays held, nothing charged.
    const [row] = await waitFor(async () => {
      const rows = await store.queryLogs({ keyId });
      return rows.length > 0 && rows;
    }, 20_000);
    expect(row).toMatchObject({ requestId, errorCode: 'buyer_unavailable' });
    expect(await store.ledgerTotal(keyId)).toBe(0n);
    expect((await store.listReservations(Date.now() + 1)).map((r) => r.id)).toEqual([requestId]);

    buyer = await startBuyerProcess(net.buyerDir, Number(new URL(buyer!.url).port));
    const lookup = await fetch(`${buyer.url}${requestRecordPath(requestId)}`);
    expect(lookup.status).toBe(200);
    const record = decodeRequestRecord(await lookup.text());
    // Paid what its journal said was delivered: the buyer's count at the seller's price.
    expect(record.errorCode).toBe('buyer_restarted');
    expect(record.usage.outputTokens).toBeGreaterThanOrEqual(journaled.usage.outputTokens);
    const delivered = costOfUsage(record.usage, PRICE);
    expect(delivered).toBeGreaterThan(0n);
    expect(delivered).toBeLessThan(reservation);
    expect(record.costUsd).toBe(formatUsd(delivered));
    const after = await signed(buyer.url);
    expect(after - before).toBe(delivered);
    // The late voucher reaches the seller on `/svc/voucher/1`: its channel rises by exactly that.
    await waitFor(() => sellerVouchered() - sellerBefore === delivered, 20_000, 'late voucher');
    const pool = new Pool(buyer.url);
    try {
      await recoverReservations({
        store,
        buyer: pool,
        now: Date.now(),
        staleAfterMs: 3_600_000,
        settleKnownAfterMs: 0,
        logger: silentLogger(),
      });
    } finally {
      await pool.close();
    }
    expect(await store.listReservations(Date.now() + 1)).toEqual([]);
    // Charged what was delivered and signed for, not the reservation.
    expect(await store.ledgerTotal(keyId)).toBe(delivered);
    expect(await store.ledgerTotal(keyId)).toBe(sellerVouchered() - sellerBefore);

    // The key keeps working once the restarted buyer reaches the seller again.
    await discoverFrom(buyer.url, peerId);
    const client = new OpenAI({ apiKey: secret, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const answer = await client.chat.completions.create({
      model: `${peerId}@gpt-paid`,
      messages: [{ role: 'user', content: 'Say a lot.' }],
      max_tokens: 2_000,
    });
    expect(answer.choices[0]!.message.content).toBe(LONG_TEXT);
    await waitFor(
      async () => (await store.listReservations(Date.now() + 1)).length === 0,
      10_000,
      'settled',
    );
    const total = await store.ledgerTotal(keyId);
    expect(total).toBe((await signed(buyer.url)) - before);
    expect(total).toBeGreaterThan(delivered);
    await waitFor(() => sellerVouchered() - sellerBefore === total, 20_000, 'vouchers delivered');
  }, 180_000);
});
