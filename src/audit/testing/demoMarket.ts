/**
 * An in-process market of demo sellers for the auditor's statistics-level tests and the audit
 * bench: the real demo model (src/seller/demo/) answers, the real auditor judges; only libp2p
 * and HTTP are left out. A seller's `weights` name the model it really serves; a substitute
 * announces the market's model with another model's weights.
 */
import { OfferIndex } from '../../catalog/index.js';
import { peerIdFor, peerRecord } from '../../catalog/testing/peerRecord.js';
import type { AuditConfig } from '../../config/index.js';
import { silentLogger } from '../../log/index.js';
import { costOfUsage, type MicroUsd, type TokenPricing, toPriceMicro } from '../../money/index.js';
import { demoAnswer } from '../../seller/index.js';
import type { AskSeller } from '../ask.js';
import { Auditor } from '../auditor.js';
import { seededRandom } from '../statistics.js';
import { AuditStore } from '../store.js';

export { seededRandom };

export interface MarketSeller {
  label: string;
  weights: string;
  pricing?: TokenPricing;
}

export interface DemoMarket {
  index: OfferIndex;
  ask: AskSeller;
  peerId(label: string): string;
  /** Audit requests answered, and what they cost. */
  stats: { requests: number; costMicro: MicroUsd };
}

const DEFAULT_PRICING: TokenPricing = { inputUsdPerMillion: 1, outputUsdPerMillion: 4 };

/** Audits after every answer, with no budget to speak of. */
export const OPEN_AUDITS: AuditConfig = {
  enabled: true,
  sampleRate: 1,
  dailyBudgetUsd: 1000,
  maxShareOfSpend: 1,
};

/** A real auditor of `market`, its store in `dataDir`, its randomness from `seed`. */
export function marketAuditor(
  market: DemoMarket,
  config: AuditConfig,
  dataDir: string,
  seed: number,
): Auditor {
  const auditor = new Auditor({
    config,
    store: new AuditStore(dataDir, Date.now),
    offers: () => market.index,
    logger: silentLogger(),
    clock: Date.now,
    random: seededRandom(seed),
  });
  auditor.start(market.ask);
  return auditor;
}

/**
 * A market of `sellers` all announcing `model`. With `sampleSeeds`, sampled answers get a seed
 * from that generator (still a draw from the model's distribution, but reproducible).
 */
export function demoMarket(
  model: string,
  sellers: MarketSeller[],
  sampleSeeds?: () => number,
): DemoMarket {
  const byPeer = new Map(sellers.map((seller) => [peerIdFor(seller.label), seller]));
  const index = OfferIndex.fromPeers(
    sellers.map((seller) =>
      peerRecord({
        peerId: seller.label,
        services: [{ id: model, pricing: seller.pricing ?? DEFAULT_PRICING }],
      }),
    ),
  );
  const stats = { requests: 0, costMicro: 0n };
  const ask: AskSeller = async (question) => {
    const seller = byPeer.get(question.peerId);
    if (!seller) throw new Error(`no seller ${question.peerId}`);
    const seed = question.seed ?? (sampleSeeds ? Math.floor(sampleSeeds() * 2 ** 31) : undefined);
    const body = {
      model: question.serviceId,
      messages: [{ role: 'user', content: question.prompt }],
      temperature: question.temperature,
      ...(seed === undefined ? {} : { seed }),
    };
    const answer = await demoAnswer(
      'openai-chat-completions',
      question.serviceId,
      body,
      JSON.stringify(body).length,
      seller.weights,
    );
    const json = JSON.parse(answer.parts.join('')) as {
      choices: { message: { content: string } }[];
    };
    const costMicro = costOfUsage(answer.usage, toPriceMicro(seller.pricing ?? DEFAULT_PRICING));
    stats.requests++;
    stats.costMicro += costMicro;
    return { text: json.choices[0]!.message.content, costMicro };
  };
  return { index, ask, peerId: peerIdFor, stats };
}
