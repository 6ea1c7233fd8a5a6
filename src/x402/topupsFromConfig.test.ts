import { decodePaymentRequiredHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDeployment } from '../chain/index.js';
import { runCli } from '../cli/testing/runCli.js';
import { configSchema } from '../config/index.js';
import { removeTempDir, tempDir } from '../testing/index.js';
import { MemoryTopupLedger } from './ledger/MemoryTopupLedger.js';
import { startTopupHarness, type TopupHarness } from './testing/topupHarness.js';
import { topupsFromConfig } from './topupsFromConfig.js';

let h: TopupHarness;
let dataDir: string;
beforeAll(async () => {
  h = await startTopupHarness();
  dataDir = tempDir('svc-x402-config-');
  writeDeployment(dataDir, h.chain.deployment);
});
afterAll(async () => {
  await h?.stop();
  if (dataDir) removeTempDir(dataDir);
});

describe('topupsFromConfig', () => {
  it('refuses to start with the cdp preset and no credentials, naming the variables', () => {
    const config = configSchema.parse({ gateway: { x402Facilitator: 'cdp' } });
    expect(() => topupsFromConfig({ config, dataDir, env: {} })).toThrow(
      /FACILITATOR_API_KEY_ID and FACILITATOR_API_KEY_SECRET/,
    );
  });

  it('refuses bounds where min exceeds max', () => {
    const config = configSchema.parse({ gateway: { topupMinUsd: '10', topupMaxUsd: '5' } });
    expect(() => topupsFromConfig({ config, dataDir, env: {} })).toThrow(/--topup-min-usd/);
  });

  it('builds a service on the local deployment with the configured bounds', async () => {
    const config = configSchema.parse({
      chain: { network: 'local', rpcUrl: h.chain.rpcUrl },
      gateway: { x402Facilitator: h.facilitatorServer.url, topupMinUsd: '1', topupMaxUsd: '9' },
    });
    const factory = topupsFromConfig({ config, dataDir, env: {} });
    const ledger = new MemoryTopupLedger();
    const service = (await factory({ topupLedger: () => ledger }))!;
    const key = h.newKey();
    const challenge = await service.handle({
      key,
      body: { amount_usd: '1' },
      resourceUrl: 'http://x/v1/key/topup',
    });
    expect(challenge.status).toBe(402);
    const accepts = decodePaymentRequiredHeader(challenge.headers['PAYMENT-REQUIRED']!).accepts[0]!;
    expect(accepts.asset.toLowerCase()).toBe(h.chain.deployment.usdcAddress.toLowerCase());
    expect(accepts.extra).toEqual({ name: 'USD Coin', version: '2' });
    const tooMuch = await service.handle({
      key,
      body: { amount_usd: '10' },
      resourceUrl: 'http://x/v1/key/topup',
    });
    expect(tooMuch.status).toBe(400);
    await service.stop();
  });

  it('disables top-ups (no throw) when the default facilitator has no chain to read', async () => {
    const empty = tempDir('svc-x402-nochain-');
    try {
      const config = configSchema.parse({});
      const factory = topupsFromConfig({ config, dataDir: empty, env: {} });
      expect(await factory({ topupLedger: () => new MemoryTopupLedger() })).toBeUndefined();
      const explicit = configSchema.parse({ gateway: { x402Facilitator: 'local' } });
      await expect(
        topupsFromConfig({ config: explicit, dataDir: empty, env: {} })({
          topupLedger: () => new MemoryTopupLedger(),
        }),
      ).rejects.toThrow(/deployment/);
    } finally {
      removeTempDir(empty);
    }
  });

  it('svc gateway start --x402-facilitator cdp without credentials refuses to start', async () => {
    const run = await runCli([
      '--data-dir',
      dataDir,
      'gateway',
      'start',
      '--port',
      '0',
      '--x402-facilitator',
      'cdp',
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: .*FACILITATOR_API_KEY_ID and FACILITATOR_API_KEY_SECRET/);
  });
});
