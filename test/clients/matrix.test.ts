/**
 * The interop matrix (docs/guide/buyer.md "Clients that work unchanged"): real client libraries from npm,
 * pinned in test/clients/package.json, driven the way their users drive them — plain text,
 * streaming, a tool loop of at least two model calls (streamed and not) and structured output —
 * through the buyer and through the gateway with a key, on a local network started like
 * `svc up`, against a seller of each native format (chat-completions, responses, messages) so
 * that translation runs both ways. The sellers' upstreams answer with the demo model
 * (test/support/demoVendor.ts); nothing asserted depends on its answer text.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, type RunningDevnet, startDevnet } from '../../src/devnet/index.js';
import type { ApiFormat } from '../../src/formats/index.js';
import type { ApiProtocol } from '../../src/network/index.js';
import { type DemoVendor, startDemoVendor } from '../support/demoVendor.js';
import { ensurePinnedPackages } from '../support/pinnedPackages.js';
import { forcedTool, requestedSchema } from '../support/structuredAnswer.js';
import { AGENTS_SDK_DRIVERS } from './agentsSdk.js';
import { AI_SDK_DRIVERS } from './aiSdk.js';
import { LANGCHAIN_DRIVERS } from './langchain.js';
import { OFFICIAL_SDK_DRIVERS } from './officialSdks.js';
import { type ClientDriver, type Endpoint, FILE_TEXT, STRUCTURED_ANSWER } from './shared.js';

const CLIENTS_DIR = new URL('.', import.meta.url).pathname;
const PACKAGES = [
  'ai',
  '@ai-sdk/openai',
  '@ai-sdk/anthropic',
  '@openai/agents',
  '@langchain/openai',
  '@langchain/anthropic',
  'zod',
];

const available = ensurePinnedPackages(
  'test/clients',
  () =>
    PACKAGES.every((name) => existsSync(join(CLIENTS_DIR, 'node_modules', name, 'package.json'))),
  'SVC_CLIENTS',
);

// Nothing may leave the machine: no tracing exports, no telemetry.
process.env.OPENAI_AGENTS_DISABLE_TRACING = '1';
delete process.env.LANGSMITH_TRACING;
delete process.env.LANGCHAIN_TRACING_V2;

const DRIVERS: ClientDriver[] = [
  ...AI_SDK_DRIVERS,
  ...AGENTS_SDK_DRIVERS,
  ...LANGCHAIN_DRIVERS,
  ...OFFICIAL_SDK_DRIVERS,
];

/** The sellers of the network: one per native format, each over its own demo vendor. */
const SELLERS: Array<{
  format: ApiFormat;
  protocol: ApiProtocol;
  provider: 'openai-chat' | 'openai-responses' | 'anthropic-messages';
  model: string;
}> = [
  {
    format: 'chat',
    protocol: 'openai-chat-completions',
    provider: 'openai-chat',
    model: 'svc-chat-only',
  },
  {
    format: 'responses',
    protocol: 'openai-responses',
    provider: 'openai-responses',
    model: 'svc-responses-only',
  },
  {
    format: 'messages',
    protocol: 'anthropic-messages',
    provider: 'anthropic-messages',
    model: 'svc-messages-only',
  },
];

let devnet: RunningDevnet;
let dataDir: string;
const vendors = new Map<ApiFormat, DemoVendor>();
const endpoints = {} as Record<Endpoint['route'], Endpoint>;

beforeAll(async () => {
  if (!available) return;
  dataDir = mkdtempSync(join(tmpdir(), 'svc-clients-'));
  for (const seller of SELLERS) vendors.set(seller.format, await startDemoVendor(seller.protocol));
  const pricing = { inputUsdPerMillion: 1, outputUsdPerMillion: 5 };
  const capabilities = { contextLength: 128_000, maxOutputTokens: 8192, toolUse: true };
  devnet = await startDevnet({
    dataDir,
    sellers: 1,
    fresh: true,
    detach: false,
    ports: {
      buyer: await freePort(),
      gateway: await freePort(),
      chain: await freePort(),
      bootstrap: await freePort(),
      facilitator: await freePort(),
      indexer: await freePort(),
    },
    env: { ...process.env, OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' },
    print: () => {},
    extraSellers: SELLERS.map((seller) => ({
      displayName: `${seller.format} only`,
      summary: `${seller.format} only`,
      providers: [
        {
          type: seller.provider,
          baseUrl: vendors.get(seller.format)!.baseUrl,
          services: { [seller.model]: { categories: ['text'], pricing, capabilities } },
          defaultPricing: pricing,
          maxConcurrency: 16,
        },
      ],
    })),
  });
  endpoints.buyer = {
    route: 'buyer',
    openaiBaseUrl: `${devnet.state.buyerUrl}/v1`,
    anthropicBaseUrl: devnet.state.buyerUrl,
    apiKey: 'placeholder',
  };
  endpoints.gateway = {
    route: 'gateway',
    openaiBaseUrl: `${devnet.state.gatewayUrl}/v1`,
    anthropicBaseUrl: devnet.state.gatewayUrl,
    apiKey: devnet.devKey.secret,
  };
}, 240_000);

afterAll(async () => {
  await devnet?.stop();
  for (const vendor of vendors.values()) await vendor.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

/** Bodies the vendor of `format` received since `from` (an index into its record). */
function receivedSince(format: ApiFormat, from: number): Record<string, unknown>[] {
  return vendors.get(format)!.received.slice(from);
}

const ROUTES: Endpoint['route'][] = ['buyer', 'gateway'];

describe.skipIf(!available)('client interop matrix', () => {
  describe.each(DRIVERS.map((driver) => [driver.name, driver] as const))('%s', (_name, driver) => {
    describe.each(ROUTES)('through the %s', (route) => {
      describe.each(SELLERS.map((seller) => [seller.format, seller] as const))(
        'to a %s seller',
        (format, seller) => {
          it('answers text', async () => {
            const text = await driver.text(endpoints[route], seller.model);
            expect(text.length).toBeGreaterThan(0);
          });

          it('streams', async () => {
            const { text, deltas } = await driver.stream(endpoints[route], seller.model);
            expect(deltas).toBeGreaterThan(0);
            expect(text.length).toBeGreaterThan(0);
          });

          it.each([false, true])('runs a tool loop (stream: %s)', async (stream) => {
            const from = vendors.get(format)!.received.length;
            const result = await driver.toolLoop(endpoints[route], seller.model, stream);
            expect(result.reads.length).toBeGreaterThan(0);
            expect(result.modelCalls).toBeGreaterThanOrEqual(2);
            expect(result.text.length).toBeGreaterThan(0);
            // Its second step referred to the first step's items by id: the buyer resolved them.
            if (driver.sendsItemReferences) expect(result.itemReferences).toBeGreaterThan(0);
            // The tool's result reached the seller's upstream in its own format.
            const bodies = receivedSince(format, from).map((body) => JSON.stringify(body));
            expect(bodies.some((body) => body.includes(FILE_TEXT))).toBe(true);
          });

          it('returns structured output', async () => {
            const from = vendors.get(format)!.received.length;
            const value = await driver.structured(endpoints[route], seller.model);
            expect(value).toEqual(STRUCTURED_ANSWER);
            // The seller's upstream was asked for it in its own format: a schema, or a forced tool.
            const asked = receivedSince(format, from).filter(
              (body) => requestedSchema(format, body) ?? forcedTool(format, body),
            );
            expect(asked.length).toBeGreaterThan(0);
          });
        },
      );
    });
  });
});
