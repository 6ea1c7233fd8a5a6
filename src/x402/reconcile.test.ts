/** Facilitator verdicts and the reconciliation of pending top-ups against the chain, on anvil. */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUsd } from '../money/index.js';
import { challenge, codeOf, counting, TOPUP_URL } from './testing/topupAssertions.js';
import {
  officialPayment,
  paymentHeader,
  startTopupHarness,
  type TopupHarness,
} from './testing/topupHarness.js';

const URL_ = TOPUP_URL;
let h: TopupHarness;

beforeAll(async () => {
  h = await startTopupHarness();
});
afterAll(async () => {
  await h?.stop();
});

describe('facilitator verdicts and reconciliation', () => {
  it('a payment the facilitator rejects → 402 facilitator_rejected, never settled', async () => {
    const { client, calls } = counting(h.facilitatorClient);
    // A wrong EIP-712 domain name: our checks agree with the challenge, the token does not.
    const { service, ledger } = h.service({
      facilitator: client,
      asset: { ...h.asset, eip712Name: 'Not The Token Name' },
    });
    const key = h.newKey();
    const payer = await h.newPayer('10');
    const header = paymentHeader(await officialPayment(payer, await challenge(service, key, '5')));
    const reply = await service.handle({
      key,
      body: { amount_usd: '5' },
      paymentSignature: header,
      resourceUrl: URL_,
    });
    expect(reply.status).toBe(402);
    expect(codeOf(reply).reason).toBe('facilitator_rejected');
    expect(calls).toEqual(['verify']);
    expect(await ledger.toppedUpMicro(key.keyId)).toBe(0n);
    expect(await ledger.listPendingTopups()).toEqual([]);
    expect(await h.usdcBalance(payer.address)).toBe(parseUsd('10'));
  });

  it('reconcile fails a pending row whose authorization expired unused', async () => {
    const { service, ledger } = h.service();
    const key = h.newKey();
    const block = await h.chain.clients.publicClient.getBlock();
    await ledger.beginTopup({
      id: 'topup_expired',
      keyId: key.keyId,
      network: `eip155:${h.chain.anvil.chainId}`,
      asset: h.asset.address,
      payer: privateKeyToAccount(generatePrivateKey()).address,
      nonce: `0x${'11'.repeat(32)}`,
      payTo: key.walletAddress,
      amountMicro: parseUsd('5'),
      validBefore: block.timestamp - 1n,
      fromBlock: block.number,
      atMs: Date.now(),
    });
    expect(await service.reconcile()).toEqual({ credited: 0, failed: 1, stillPending: 0 });
    expect(ledger.get('topup_expired')?.errorReason).toBe('authorization_expired_unsettled');
    expect(await ledger.toppedUpMicro(key.keyId)).toBe(0n);
  });

  it('reconcile leaves an unexpired, unused authorization pending', async () => {
    const { service, ledger } = h.service();
    const key = h.newKey();
    const block = await h.chain.clients.publicClient.getBlock();
    await ledger.beginTopup({
      id: 'topup_waiting',
      keyId: key.keyId,
      network: `eip155:${h.chain.anvil.chainId}`,
      asset: h.asset.address,
      payer: privateKeyToAccount(generatePrivateKey()).address,
      nonce: `0x${'22'.repeat(32)}`,
      payTo: key.walletAddress,
      amountMicro: parseUsd('5'),
      validBefore: block.timestamp + 600n,
      fromBlock: block.number,
      atMs: Date.now(),
    });
    expect(await service.reconcile()).toEqual({ credited: 0, failed: 0, stillPending: 1 });
  });

  it('reconcile fails a pending row whose nonce paid someone else', async () => {
    const { service, ledger } = h.service();
    const key = h.newKey();
    const payer = await h.newPayer('10');
    const stranger = privateKeyToAccount(generatePrivateKey()).address;
    const fromBlock = await h.chain.clients.publicClient.getBlockNumber();
    const required = await challenge(service, h.newKey({ walletAddress: stranger }), '5');
    const payload = await officialPayment(payer, required);
    const settled = await h.facilitatorClient.settle(payload, required.accepts[0]!);
    expect(settled.success).toBe(true);
    const auth = (
      payload.payload as { authorization: { nonce: `0x${string}`; validBefore: string } }
    ).authorization;
    await ledger.beginTopup({
      id: 'topup_elsewhere',
      keyId: key.keyId,
      network: `eip155:${h.chain.anvil.chainId}`,
      asset: h.asset.address,
      payer: payer.address,
      nonce: auth.nonce,
      payTo: key.walletAddress,
      amountMicro: parseUsd('5'),
      validBefore: BigInt(auth.validBefore),
      fromBlock,
      atMs: Date.now(),
    });
    expect(await service.reconcile()).toEqual({ credited: 0, failed: 1, stillPending: 0 });
    expect(ledger.get('topup_elsewhere')?.errorReason).toBe('authorization_used_elsewhere');
    expect(await ledger.toppedUpMicro(key.keyId)).toBe(0n);
  });
});
