/**
 * The highest token price of each model, from the buyer's catalog (`GET /v1/models`), cached
 * briefly: reservations are sized with it (docs/decisions/121-reservations-sized-to-the-request.md).
 * A model the catalog does not list, or a catalog that cannot be read, has no price here.
 */
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { normalizeModelName } from '../../catalog/index.js';
import { type TokenPriceMicro, toPriceMicro } from '../../money/index.js';

const CACHE_MS = 10_000;
const MAX_CATALOG_BYTES = 8 * 1024 * 1024;

const usdPerMillion = z.number().finite().nonnegative().max(1_000_000);
const catalogSchema = z.object({
  data: z
    .array(
      z.object({
        id: z.string().max(512),
        aliases: z.array(z.string().max(512)).max(64).optional(),
        peers: z
          .array(
            z.object({
              prices: z
                .object({
                  inputUsdPerMillion: usdPerMillion,
                  outputUsdPerMillion: usdPerMillion,
                  cachedInputUsdPerMillion: usdPerMillion.optional(),
                })
                .optional(),
            }),
          )
          .max(10_000),
      }),
    )
    .max(100_000),
});

/** The larger of two amounts (bigint: Math.max does not apply). */
function larger(a: bigint, b: bigint): bigint {
  if (a > b) return a;
  return b;
}

function highest(a: TokenPriceMicro, b: TokenPriceMicro): TokenPriceMicro {
  return {
    inputMicroPerMillion: larger(a.inputMicroPerMillion, b.inputMicroPerMillion),
    outputMicroPerMillion: larger(a.outputMicroPerMillion, b.outputMicroPerMillion),
    cachedInputMicroPerMillion: larger(
      a.cachedInputMicroPerMillion ?? a.inputMicroPerMillion,
      b.cachedInputMicroPerMillion ?? b.inputMicroPerMillion,
    ),
  };
}

/** Model names (normalised) to their highest price, refreshed at most every 10 s. */
export class PriceBook {
  private prices = new Map<string, TokenPriceMicro>();
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly buyer: Dispatcher,
    private readonly headers: Record<string, string>,
    private readonly now: () => number = Date.now,
  ) {}

  /** The highest price of `model` among its offers, or undefined when unknown. */
  async priceOf(model: string): Promise<TokenPriceMicro | undefined> {
    if (this.now() - this.fetchedAt > CACHE_MS) {
      this.loading ??= this.load().finally(() => {
        this.loading = undefined;
      });
      await this.loading;
    }
    // A pinned `peer@model` is priced as the model: the highest offer bounds the pinned one.
    const name = model.includes('@') ? model.slice(model.indexOf('@') + 1) : model;
    return this.prices.get(normalizeModelName(name));
  }

  private async load(): Promise<void> {
    try {
      const response = await this.buyer.request({
        method: 'GET',
        path: '/v1/models',
        headers: this.headers,
        headersTimeout: 2_000,
        bodyTimeout: 2_000,
      });
      const length = Number(response.headers['content-length'] ?? 0);
      if (response.statusCode !== 200 || length > MAX_CATALOG_BYTES) {
        await response.body.dump();
        return;
      }
      const catalog = catalogSchema.parse(await response.body.json());
      const prices = new Map<string, TokenPriceMicro>();
      for (const entry of catalog.data) {
        let top: TokenPriceMicro | undefined;
        for (const peer of entry.peers) {
          if (!peer.prices) continue;
          const price = toPriceMicro(peer.prices);
          top = top ? highest(top, price) : price;
        }
        if (!top) continue;
        for (const name of [entry.id, ...(entry.aliases ?? [])]) {
          prices.set(normalizeModelName(name), top);
        }
      }
      this.prices = prices;
    } catch {
      // Keep the last catalog; an unknown model falls back to the configured maximum.
    } finally {
      this.fetchedAt = this.now();
    }
  }
}
