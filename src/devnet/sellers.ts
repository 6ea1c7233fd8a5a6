/**
 * The sellers of the local network: demo sellers with different names, prices and services
 * (so automatic routing has something to choose between), plus a real seller for each vendor
 * whose API key is in the environment.
 */
import type { ProviderConfig } from '../config/index.js';

export interface DevSeller {
  displayName: string;
  providers: ProviderConfig[];
  /** One line for the progress output. */
  summary: string;
}

interface DemoProfile {
  name: string;
  services: Record<string, { input: number; output: number; cached?: number }>;
}

const PROFILES: DemoProfile[] = [
  {
    name: 'Demo Alpha',
    services: {
      'svc-demo-fast': { input: 0.1, output: 0.4 },
      'svc-demo-smart': { input: 3, output: 15, cached: 0.3 },
    },
  },
  {
    name: 'Demo Beta',
    services: {
      'svc-demo-fast': { input: 0.15, output: 0.6 },
      'svc-demo-smart': { input: 2.5, output: 12, cached: 0.25 },
    },
  },
  {
    name: 'Demo Gamma',
    services: {
      'svc-demo-fast': { input: 0.2, output: 0.8 },
      'svc-demo-reasoning': { input: 1, output: 4 },
    },
  },
];

/** The i-th demo seller (0-based); beyond the profiles, prices grow by 10% per extra seller. */
export function demoSeller(index: number): DevSeller {
  const profile = PROFILES[index % PROFILES.length]!;
  const round = Math.floor(index / PROFILES.length);
  const scale = (usd: number) => Math.round(usd * (1 + 0.1 * round) * 1_000_000) / 1_000_000;
  const services: ProviderConfig['services'] = {};
  for (const [id, price] of Object.entries(profile.services)) {
    services[id] = {
      categories: ['text'],
      pricing: {
        inputUsdPerMillion: scale(price.input),
        outputUsdPerMillion: scale(price.output),
        ...(price.cached !== undefined ? { cachedInputUsdPerMillion: scale(price.cached) } : {}),
      },
      capabilities: { contextLength: 128_000, maxOutputTokens: 8192, toolUse: true },
    };
  }
  const displayName = round === 0 ? profile.name : `${profile.name} ${round + 1}`;
  const first = Object.entries(services)[0]!;
  return {
    displayName,
    providers: [
      {
        type: 'demo',
        name: 'demo',
        services,
        defaultPricing: { inputUsdPerMillion: 1, outputUsdPerMillion: 1 },
        maxConcurrency: 16,
      },
    ],
    summary: `${displayName}: ${Object.keys(services).join(', ')} (from ${first[1].pricing!.inputUsdPerMillion}/${first[1].pricing!.outputUsdPerMillion} USD per M)`,
  };
}

/**
 * A demo seller that announces `svc-demo-smart` cheaply but answers with `svc-demo-fast`'s
 * weights (`upstreamModel`): the substitute the buyer's audits catch (docs/guide/trust.md).
 */
export function substituteSeller(): DevSeller {
  return {
    displayName: 'Demo Substitute',
    providers: [
      {
        type: 'demo',
        name: 'demo',
        services: {
          'svc-demo-smart': {
            upstreamModel: 'svc-demo-fast',
            categories: ['text'],
            pricing: { inputUsdPerMillion: 1, outputUsdPerMillion: 5 },
            capabilities: { contextLength: 128_000, maxOutputTokens: 8192, toolUse: true },
          },
        },
        defaultPricing: { inputUsdPerMillion: 1, outputUsdPerMillion: 1 },
        maxConcurrency: 16,
      },
    ],
    summary: 'Demo Substitute: svc-demo-smart (1/5 USD per M), serving svc-demo-fast answers',
  };
}

/** Real sellers for the vendor keys present in `env` (never in tests: they set no such keys). */
export function realSellers(env: NodeJS.ProcessEnv): DevSeller[] {
  const sellers: DevSeller[] = [];
  if (env.OPENAI_API_KEY) {
    sellers.push({
      displayName: 'OpenAI (your key)',
      summary: 'OpenAI (your key): gpt-4o-mini, gpt-4o',
      providers: [
        {
          type: 'openai-chat',
          name: 'openai',
          apiKeyEnv: 'OPENAI_API_KEY',
          services: {
            'gpt-4o-mini': {
              categories: ['text'],
              pricing: {
                inputUsdPerMillion: 0.15,
                outputUsdPerMillion: 0.6,
                cachedInputUsdPerMillion: 0.075,
              },
            },
            'gpt-4o': {
              categories: ['text'],
              pricing: {
                inputUsdPerMillion: 2.5,
                outputUsdPerMillion: 10,
                cachedInputUsdPerMillion: 1.25,
              },
            },
          },
          defaultPricing: { inputUsdPerMillion: 2.5, outputUsdPerMillion: 10 },
          maxConcurrency: 8,
        },
      ],
    });
  }
  if (env.ANTHROPIC_API_KEY) {
    sellers.push({
      displayName: 'Anthropic (your key)',
      summary: 'Anthropic (your key): claude-sonnet-4-5, claude-haiku-4-5',
      providers: [
        {
          type: 'anthropic-messages',
          name: 'anthropic',
          apiKeyEnv: 'ANTHROPIC_API_KEY',
          services: {
            'claude-sonnet-4-5': {
              categories: ['text'],
              pricing: {
                inputUsdPerMillion: 3,
                outputUsdPerMillion: 15,
                cachedInputUsdPerMillion: 0.3,
              },
            },
            'claude-haiku-4-5': {
              categories: ['text'],
              pricing: {
                inputUsdPerMillion: 1,
                outputUsdPerMillion: 5,
                cachedInputUsdPerMillion: 0.1,
              },
            },
          },
          defaultPricing: { inputUsdPerMillion: 3, outputUsdPerMillion: 15 },
          maxConcurrency: 8,
        },
      ],
    });
  }
  return sellers;
}
