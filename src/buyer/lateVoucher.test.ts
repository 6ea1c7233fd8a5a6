/**
 * The late voucher through the real payments services on anvil
 * (docs/decisions/154-late-voucher-after-a-crash.md): a buyer stopped mid-stream restarts, signs a
 * voucher for what its journal says was delivered, and the seller gets it — at once when it can
 * be reached, else on the next request's payment object.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAUCET_ETH, type LocalChain, startLocalChain } from '../chain/index.js';
import { IdentityStore } from '../identity/index.js';
import { silentLogger } from '../log/index.js';
import { costOfUsage, toPriceMicro } from '../money/index.js';
import {
  type BuyerPaymentService,
  createBuyerPayments,
  createSellerPayments,
  decodeVoucherReply,
  encodeVoucherMessage,
  type VoucherMessage,
  VoucherPayments,
  type VoucherReply,
} from '../payments/index.js';
import { waitFor } from '../testing/index.js';
import { closeOpenRecords } from './closeOpenRecords.js';
import { type RequestRecord, RequestRecords } from './requestRecords.js';
import { encodeStreamPayment } from './streamProgress.js';

let chain: LocalChain;
const dirs: string[] = [];
const stops: Array<() => Promise<unknown>> = [];
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), `svc-late-${prefix}-`));
  dirs.push(dir);
  return dir;
};

beforeAll(async () => {
  chain = await startLocalChain();
}, 60_000);

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await chain?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const PRICE = toPriceMicro({ inputUsdPerMillion: 3, outputUsdPerMillion: 20 });
const MAX_COST = 50_000n;

describe('a late voucher after a buyer crash', () => {
  it('is signed and recorded when the seller is unreachable, and reaches it on the next request', async () => {
    const buyerDir = tempDir('buyer');
    const identities = new IdentityStore(buyerDir, {});
    await chain.faucet(identities.loadDefault().account.address, {
      ethWei: DEFAULT_FAUCET_ETH,
      usdcMicro: 1_000_000n,
    });
    const account = privateKeyToAccount(generatePrivateKey());
    await chain.faucet(account.address, { ethWei: DEFAULT_FAUCET_ETH });
    const seller = createSellerPayments({
      dataDir: tempDir('seller'),
      account,
      chain: chain.contract,
      logger: silentLogger(),
      tickIntervalMs: 0,
    });
    await seller.start();
    stops.push(() => seller.stop());
    const peerId = account.address.slice(2).toLowerCase();
    const voucherAtSeller = () => seller.channels()[0]?.voucherMicro ?? 0n;
    const startBuyer = async () => {
      const payments = createBuyerPayments({
        dataDir: buyerDir,
        identities,
        chain: chain.contract,
        logger: silentLogger(),
        sweepIntervalMs: 0,
        reconcileIntervalMs: 0,
      });
      await payments.start();
      stops.push(() => payments.stop());
      return payments;
    };
    const args = {
      identity: 'default',
      peerId,
      sellerAddress: account.address,
      price: PRICE,
      maxCostMicro: MAX_COST,
    };

    /** A stream admitted by the seller, part delivered, then the buyer dies (nothing signed). */
    const crashMidStream = async (buyer: BuyerPaymentService, requestId: string) => {
      const payment = await buyer.prepare({ ...args, requestId });
      const admission = await seller.admit(
        JSON.parse(JSON.stringify(payment)),
        { price: PRICE },
        0n,
      );
      const delivered = { inputTokens: 1_000, cachedInputTokens: 0, outputTokens: 40 };
      seller.record(admission.requestId, delivered, costOfUsage(delivered, PRICE));
      await buyer.stop();
      const journal = new RequestRecords(buyerDir);
      const open: RequestRecord = {
        requestId,
        status: 200,
        completed: false,
        streamed: true,
        peerId,
        provider: 'openai',
        serviceId: 'm',
        model: 'm',
        usage: delivered,
        costUsd: '0.000000',
        latencyMs: 1,
        attempts: [],
      };
      const progress = { identity: 'default', peerId, price: PRICE, maxCostMicro: MAX_COST };
      journal.put(open, encodeStreamPayment({ ...progress, usage: delivered }));
      journal.close();
      return costOfUsage(delivered, PRICE);
    };

    /** The restarted buyer, closing its journal with `deliver` as its voucher route. */
    const restart = async (
      deliver: (peer: string, voucher: VoucherMessage) => Promise<VoucherReply>,
      retryDelayMs?: (failures: number) => number,
    ) => {
      const payments = await startBuyer();
      const adapter = new VoucherPayments({
        payments,
        logger: silentLogger(),
        deliver,
        ...(retryDelayMs ? { retryDelayMs } : {}),
      });
      const records = new RequestRecords(buyerDir);
      await closeOpenRecords(records, adapter, silentLogger());
      await adapter.idle();
      return { payments, records, adapter };
    };

    // 1. The seller cannot be reached: the voucher is signed, the cost recorded, delivery fails.
    const initial = await startBuyer();
    await initial.sweeper.sweepOnce();
    const owed = await crashMidStream(initial, 'crash-1');
    expect(owed).toBe(3_800n);
    const unreachable = async (): Promise<VoucherReply> => {
      throw new Error('no route to seller');
    };
    const first = await restart(unreachable);
    expect(first.records.get('crash-1')).toMatchObject({
      costUsd: '0.003800',
      errorCode: 'buyer_restarted',
    });
    expect(first.payments.channels.list()[0]!.signedMicro).toBe(owed);
    first.records.close();
    expect(voucherAtSeller()).toBe(0n);
    // The next request's payment object carries it; the seller takes it on admission.
    const next = await first.payments.prepare({ ...args, requestId: 'next' });
    expect(next?.voucher?.cumulativeAmount).toBe(owed.toString());
    await seller.admit(JSON.parse(JSON.stringify(next)), { price: PRICE }, 0n);
    expect(voucherAtSeller()).toBe(owed);
    seller.record('next', { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 }, 0n);

    // 2. Reachable: the seller accepts the higher cumulative voucher on `/svc/voucher/1` at once.
    const owedAgain = await crashMidStream(first.payments, 'crash-2');
    const toSeller = async (_peer: string, voucher: VoucherMessage) =>
      decodeVoucherReply(await seller.handleVoucherBytes(encodeVoucherMessage(voucher)));
    const second = await restart(toSeller);
    expect(second.records.get('crash-2')).toMatchObject({ costUsd: '0.003800' });
    second.records.close();
    expect(voucherAtSeller()).toBe(owed + owedAgain);
    expect(second.payments.channels.list()[0]!.signedMicro).toBe(owed + owedAgain);

    // 3. Unreachable at first (a seller restarting), and no request goes to it afterwards: the
    // voucher is sent again until it arrives (docs/decisions/185-vouchers-kept-until-delivered.md).
    const owedThird = await crashMidStream(second.payments, 'crash-3');
    let calls = 0;
    const backLater = async (peer: string, voucher: VoucherMessage) => {
      calls++;
      // Fails twice: when signed, and when `idle` sends what waits (restart above calls it).
      if (calls <= 2) throw new Error('connection refused');
      return toSeller(peer, voucher);
    };
    const third = await restart(backLater);
    third.records.close();
    expect(voucherAtSeller()).toBe(owed + owedAgain);
    await waitFor(
      () => voucherAtSeller() === owed + owedAgain + owedThird,
      20_000,
      'the voucher sent again',
    );
    expect(calls).toBe(3);

    // 4. Its next try an hour away, the seller is seen back (a new connection): it goes at once.
    const owedFourth = await crashMidStream(third.payments, 'crash-4');
    let up = false;
    const seen: string[] = [];
    const whenUp = async (peer: string, voucher: VoucherMessage) => {
      seen.push(peer);
      if (!up) throw new Error('connection refused');
      return toSeller(peer, voucher);
    };
    const fourth = await restart(whenUp, () => 3_600_000);
    fourth.records.close();
    expect(seen).toHaveLength(2);
    const paidSoFar = owed + owedAgain + owedThird;
    expect(voucherAtSeller()).toBe(paidSoFar);
    up = true;
    fourth.adapter.sellerBack('someone else');
    expect(seen).toHaveLength(2);
    fourth.adapter.sellerBack(seen[0]!);
    await waitFor(() => voucherAtSeller() === paidSoFar + owedFourth, 20_000, 'sent once back');
  }, 120_000);
});
