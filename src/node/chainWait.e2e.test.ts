/**
 * A buyer or seller started while its payment chain is down waits for it (chain.payments
 * .chainWaitSeconds) and comes up paying, instead of refusing to start (seller) or running with
 * free offers only for its whole life (buyer). A real anvil is stopped and started again on the
 * same port from its state file (docs/decisions/207-start-waits-for-the-chain.md).
 */
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { type LocalChain, type PaymentsContract, startLocalChain } from '../chain/index.js';
import { defaultConfig } from '../config/index.js';
import { isSvcError } from '../errors/index.js';
import { IdentityStore } from '../identity/index.js';
import { createLogger, type Logger } from '../log/index.js';
import { loopbackNetworkConfig, randomIdentity } from '../network/testing/loopback.js';
import { startFakeUpstream } from '../seller/testing/index.js';
import { removeTempDir, tempDir } from '../testing/index.js';
import { startPaidBuyerNode } from './startBuyerNode.js';
import { startPaidSeller } from './startSellerNode.js';
import { sellerConfig } from './testing/paidFixture.js';

const dirs: string[] = [];
const stops: (() => Promise<unknown>)[] = [];
let chain: LocalChain | undefined;

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await chain?.stop();
  for (const dir of dirs) removeTempDir(dir);
});

function dir(prefix: string): string {
  const path = tempDir(`svc-${prefix}-`);
  dirs.push(path);
  return path;
}

/** A logger whose JSON lines are kept, to read what the wait said. */
function recordingLogger() {
  const lines: string[] = [];
  const destination = new PassThrough();
  destination.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n')));
  return { logger: createLogger({ destination, pretty: false, level: 'warn' }), lines };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A paid seller of a fresh fake upstream on `contract`, waiting `waitSeconds` for the chain. */
async function startSellerOn(contract: PaymentsContract, waitSeconds: number, logger?: Logger) {
  const upstream = await startFakeUpstream();
  stops.push(() => upstream.close());
  return startPaidSeller({
    identity: randomIdentity(),
    seller: sellerConfig(upstream),
    network: loopbackNetworkConfig({ bootstrap: [] }),
    env: { FAKE_OPENAI_KEY: 'sk-fake' },
    dataDir: dir('wait-seller'),
    chain: contract,
    tickIntervalMs: 0,
    ...(logger ? { logger } : {}),
    paymentsConfig: { chainWaitSeconds: waitSeconds },
  });
}

describe('a start while the payment chain is down', () => {
  it('waits for the chain: the seller and the buyer come up paid once it is back', async () => {
    const chainDir = dir('wait-chain');
    const stateFile = `${chainDir}/state.json`;
    chain = await startLocalChain({ dataDir: chainDir, stateFile });
    const port = chain.anvil.port;
    const contract = chain.contract;
    await chain.stop();
    chain = undefined;

    const seller = recordingLogger();
    const sellerStart = startSellerOn(contract, 60, seller.logger);
    const buyerDir = dir('wait-buyer');
    const identities = new IdentityStore(buyerDir, {});
    const buyer = recordingLogger();
    const buyerStart = startPaidBuyerNode({
      config: { ...defaultConfig(), network: loopbackNetworkConfig({ bootstrap: [] }) },
      dataDir: buyerDir,
      identity: identities.loadDefault(),
      identities,
      chain: contract,
      paymentsConfig: { chainWaitSeconds: 60 },
      logger: buyer.logger,
      port: 0,
      sweepIntervalMs: 0,
      reputationRefreshMs: 0,
    });
    // Both have found the chain down and said so before it comes back.
    for (let i = 0; i < 100; i++) {
      const said = (lines: string[]) => lines.some((l) => l.includes('payment chain unreachable'));
      if (said(seller.lines) && said(buyer.lines)) break;
      await sleep(100);
    }
    expect(seller.lines.join('\n')).toContain('seller: payment chain unreachable, trying again in');
    expect(buyer.lines.join('\n')).toContain('buyer: payment chain unreachable, trying again in');

    chain = await startLocalChain({ dataDir: chainDir, stateFile, port });
    const paidSeller = await sellerStart;
    stops.push(() => paidSeller.stop());
    const paidBuyer = await buyerStart;
    stops.push(() => paidBuyer.stop());
    expect(paidSeller.payments).toBeDefined();
    expect(paidSeller.metadata().capabilities.payments?.paymentsContract).toBe(
      chain.deployment.paymentsAddress,
    );
    expect(paidBuyer.payments).toBeDefined();
    expect(paidBuyer.paymentsProblem).toBeUndefined();
  }, 120_000);

  it('gives up after the wait: the seller refuses to start with chain_unavailable', async () => {
    const chainDir = dir('gone-chain');
    const gone = await startLocalChain({ dataDir: chainDir });
    const contract = gone.contract;
    await gone.stop();
    const failure = await startSellerOn(contract, 2).catch((error: unknown) => error);
    expect(isSvcError(failure) && failure.code).toBe('chain_unavailable');
  }, 60_000);
});
