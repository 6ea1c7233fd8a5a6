/** Paying a top-up with the official x402 fetch wrapper and `svc x402 pay-topup`, on anvil. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/testing/runCli.js';
import { parseUsd } from '../money/index.js';
import { removeTempDir, tempDir } from '../testing/index.js';
import type { MemoryTopupLedger } from './ledger/MemoryTopupLedger.js';
import { payTopup } from './payTopup.js';
import { startTopupHarness, type TopupHarness } from './testing/topupHarness.js';
import { startTopupHttpServer, type TopupHttpServer } from './testing/topupHttpServer.js';
import type { TopupKey } from './types.js';

let h: TopupHarness;
let server: TopupHttpServer;
let ledger: MemoryTopupLedger;
let key: TopupKey;
let dataDir: string;

beforeAll(async () => {
  h = await startTopupHarness();
  const made = h.service();
  ledger = made.ledger;
  key = h.newKey();
  server = await startTopupHttpServer(made.service, { svc_paytest: key });
  dataDir = tempDir('svc-x402-pay-');
});
afterAll(async () => {
  await server?.close();
  await h?.stop();
  if (dataDir) removeTempDir(dataDir);
});

describe('payTopup (official @x402/fetch client)', () => {
  it('402 -> sign -> 200; the wallet and the credit rise by exactly the amount', async () => {
    const payer = await h.newPayer('50');
    const before = await h.usdcBalance(key.walletAddress);
    const result = await payTopup({
      gatewayUrl: server.url,
      apiKey: 'svc_paytest',
      amountUsd: '12.5',
      account: payer,
    });
    expect(result.status).toBe(200);
    expect(result.settle?.success).toBe(true);
    expect(result.challenge.accepts[0]?.amount).toBe('12500000');
    expect((await h.usdcBalance(key.walletAddress)) - before).toBe(parseUsd('12.5'));
    expect(await h.usdcBalance(payer.address)).toBe(parseUsd('37.5'));
    expect(await ledger.toppedUpMicro(key.keyId)).toBe(parseUsd('12.5'));
  });

  it('reports the refusal of an amount out of bounds without paying', async () => {
    const payer = await h.newPayer('5');
    await expect(
      payTopup({ gatewayUrl: server.url, apiKey: 'svc_paytest', amountUsd: '1', account: payer }),
    ).rejects.toThrow(/400.*2\.000000.*500\.000000/);
    expect(await h.usdcBalance(payer.address)).toBe(parseUsd('5'));
  });
});

describe('svc x402 pay-topup', () => {
  it('pays from a named identity and prints the settlement', async () => {
    const created = await runCli([
      '--data-dir',
      dataDir,
      '--json',
      'buyer',
      'identity',
      'create',
      'payer',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const address = JSON.parse(created.stdout).address as `0x${string}`;
    await h.chain.faucet(address, { usdcMicro: parseUsd('10') });
    const before = await ledger.toppedUpMicro(key.keyId);
    const run = await runCli([
      '--data-dir',
      dataDir,
      '--json',
      'x402',
      'pay-topup',
      '4',
      '--key',
      'svc_paytest',
      '--gateway-url',
      server.url,
      '--identity',
      'payer',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.status).toBe(200);
    expect(out.settle.success).toBe(true);
    expect(out.settle.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await ledger.toppedUpMicro(key.keyId)) - before).toBe(parseUsd('4'));
    expect(await h.usdcBalance(address)).toBe(parseUsd('6'));
  });

  it('fails with a one-line error when the wallet cannot pay', async () => {
    const created = await runCli([
      '--data-dir',
      dataDir,
      '--json',
      'buyer',
      'identity',
      'create',
      'empty',
    ]);
    expect(created.code).toBe(0);
    const run = await runCli([
      '--data-dir',
      dataDir,
      'x402',
      'pay-topup',
      '3',
      '--key',
      'svc_paytest',
      '--gateway-url',
      server.url,
      '--identity',
      'empty',
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: top-up refused \(402\).*USDC/);
  });

  it('has help with examples', async () => {
    const run = await runCli(['x402', 'pay-topup', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Examples:');
    const facilitator = await runCli(['x402', 'facilitator', '--help']);
    expect(facilitator.stdout).toContain('--rpc-url');
  });
});
