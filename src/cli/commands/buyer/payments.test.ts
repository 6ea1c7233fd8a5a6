/** `svc chain faucet`, `svc buyer deposit|metering|channels` and `identity list --balances` on anvil. */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalChain, startLocalChain } from '../../../chain/index.js';
import { IdentityStore } from '../../../identity/index.js';
import { silentLogger } from '../../../log/index.js';
import { costOfUsage, toPriceMicro } from '../../../money/index.js';
import { createBuyerPayments, createSellerPayments } from '../../../payments/index.js';
import { tempDataDir } from '../../../payments/testing.js';
import { runCli } from '../../testing/runCli.js';

let chain: LocalChain;
const data = tempDataDir('cli-pay');
const svc = (...args: string[]) => runCli(['--data-dir', data.dir, ...args]);

beforeAll(async () => {
  chain = await startLocalChain({ dataDir: data.dir, gracePeriodSeconds: 60 });
});

afterAll(async () => {
  await chain?.stop();
  data.remove();
});

describe('payments commands', () => {
  it('funds, shows and meters a buyer, and closes and reclaims its channel', async () => {
    const address = new IdentityStore(data.dir, {}).loadDefault().account.address;
    const before = JSON.parse((await svc('buyer', 'deposit', '--json')).stdout);
    expect(before).toMatchObject({
      address,
      network: 'local',
      walletUsdc: '0.000000',
      creditsUsdc: '0.000000',
    });
    expect(before.faucet).toBe(`svc chain faucet ${address} --usdc 10 --eth 1`);

    const faucet = await svc('chain', 'faucet', address, '--usdc', '2.5', '--eth', '1');
    expect(faucet.code).toBe(0);
    expect(faucet.stdout).toContain('sent 2.500000 USDC and 1 ETH');
    const text = await svc('buyer', 'deposit', '--qr');
    expect(text.stdout).toContain(address);
    expect(text.stdout).toContain('wallet    2.500000 USDC');
    expect(text.stdout).toMatch(/[▀▄█]/);

    const now = JSON.parse((await svc('buyer', 'deposit', '--now', '--json')).stdout);
    expect(now).toMatchObject({
      depositedUsdc: '2.500000',
      walletUsdc: '0.000000',
      creditsUsdc: '2.500000',
    });
    const balances = JSON.parse(
      (await svc('buyer', 'identity', 'list', '--balances', '--json')).stdout,
    );
    expect(balances[0].balances).toMatchObject({ walletUsdc: '0.000000', creditsUsdc: '2.500000' });

    // One paid request through the services, so there is a channel to meter and close.
    const seller = privateKeyToAccount(generatePrivateKey());
    await chain.faucet(seller.address, { ethWei: 10n ** 18n });
    const sellerDir = tempDataDir('cli-seller');
    const buyer = createBuyerPayments({
      dataDir: data.dir,
      identities: new IdentityStore(data.dir, {}),
      chain: chain.contract,
      logger: silentLogger(),
      sweepIntervalMs: 0,
    });
    const sellerPayments = createSellerPayments({
      dataDir: sellerDir.dir,
      account: seller,
      chain: chain.contract,
      logger: silentLogger(),
      tickIntervalMs: 0,
    });
    const price = toPriceMicro({ inputUsdPerMillion: 1, outputUsdPerMillion: 2 });
    const usage = { inputTokens: 1000, cachedInputTokens: 0, outputTokens: 1000 };
    const payment = await buyer.prepare({
      identity: 'default',
      peerId: 'p',
      sellerAddress: seller.address,
      price,
      maxCostMicro: 10_000n,
    });
    const admission = await sellerPayments.admit(payment, { price }, 10_000n);
    sellerPayments.record(admission.requestId, usage, costOfUsage(usage, price));
    const done = await buyer.complete({
      requestId: payment!.requestId,
      peerId: 'p',
      claimed: { usage },
      estimatedUsage: usage,
      price,
    });
    await sellerPayments.receiveVoucher(done.voucher!);
    await sellerPayments.settleAll();
    await sellerPayments.stop();
    await buyer.stop();
    sellerDir.remove();

    const metering = JSON.parse((await svc('buyer', 'metering', '--json')).stdout);
    expect(metering.channels).toHaveLength(1);
    expect(metering.channels[0]).toMatchObject({
      status: 'open',
      requests: 1,
      inputTokens: 1000,
      outputTokens: 1000,
      signedUsd: '0.003000',
      settledUsd: '0.003000',
      lockUsd: '1.000000',
    });
    const table = await svc('buyer', 'metering');
    expect(table.stdout).toMatch(/CHANNEL\s+IDENTITY\s+SELLER\s+STATUS\s+REQUESTS/);

    const channelId = metering.channels[0].channelId as string;
    const listed = JSON.parse((await svc('buyer', 'channels', 'list', '--json')).stdout);
    expect(listed).toEqual([
      expect.objectContaining({ channelId, status: 'open', unspentUsd: '0.997000' }),
    ]);
    const early = await svc('buyer', 'channels', 'reclaim', channelId);
    expect(early.code).toBe(1);
    expect(early.stderr).toContain('Request close first');
    const closing = await svc('buyer', 'channels', 'close', channelId);
    expect(closing.code).toBe(0);
    expect(closing.stdout).toContain('reclaim the unspent 0.997000 USDC after');
    const tooSoon = await svc('buyer', 'channels', 'reclaim', channelId);
    expect(tooSoon.stderr).toContain('grace period ends');
    await chain.increaseTime(61);
    const reclaimed = await svc('buyer', 'channels', 'reclaim', channelId, '--json');
    expect(JSON.parse(reclaimed.stdout)).toMatchObject({ status: 'closed' });
    const after = JSON.parse((await svc('buyer', 'deposit', '--json')).stdout);
    expect(after.creditsUsdc).toBe('2.497000');
    const bad = await svc('buyer', 'channels', 'close', 'nope');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('is not a channel id');
  });

  it('says plainly when the chain is unreachable', async () => {
    const other = tempDataDir('cli-dead');
    try {
      const env = { SVC_DATA_DIR: other.dir };
      await runCli(['config', 'set', 'chain.rpcUrl', 'http://127.0.0.1:9'], env);
      await runCli(
        ['config', 'set', 'chain.paymentsAddress', chain.deployment.paymentsAddress],
        env,
      );
      await runCli(['config', 'set', 'chain.usdcAddress', chain.deployment.usdcAddress], env);
      const listed = await runCli(['buyer', 'identity', 'list', '--balances'], env);
      expect(listed.stdout).toContain('chain unreachable at http://127.0.0.1:9');
      const deposit = JSON.parse((await runCli(['buyer', 'deposit', '--json'], env)).stdout);
      expect(deposit.error).toBe('chain unreachable at http://127.0.0.1:9');
      const faucet = await runCli(
        ['chain', 'faucet', '0x0000000000000000000000000000000000000001', '--usdc', '1'],
        env,
      );
      expect(faucet.code).toBe(1);
      expect(faucet.stderr).toContain('No local chain deployment');
    } finally {
      other.remove();
    }
  });
});
