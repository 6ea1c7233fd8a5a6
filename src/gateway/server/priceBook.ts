/**
 * The offers of each model, from the buyer's catalog (`GET /v1/models`), in the order its
 * routing ranks them, cached briefly: reservations are priced at the offers a request may use
 * (docs/decisions/169-reservations-priced-at-the-route.md). A model the catalog does not list,
 * or a catalog that cannot be read, has no offers here.
 */
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { normalizeModelName } from '../../catalog/index.js';
import { readStreamBody } from '../../http/index.js';
import { toPriceMicro } from '../../money/index.js';
import type { PricedOffer } from '../budget/routeOffers.js';

const CACHE_MS = 10_000;
/** Older than this, a catalog is reloaded before it answers; younger, while it answers. */
const STALE_MS = 60_000;
/** The most of the buyer's catalog read, whether it declares its length or is sent in pieces. */
export const MAX_CATALOG_BYTES = 8 * 1024 * 1024;

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
              peerId: z.string().max(64),
              prices: z
                .object({
                  inputUsdPerMillion: usdPerMillion,
                  outputUsdPerMillion: usdPerMillion,
                  cachedInputUsdPerMillion: usdPerMillion.optional(),
                })
                .optional(),
              reputationScore: z.number().nullable().optional(),
              // A buyer that does not say admits every offer it lists.
              eligible: z.boolean().optional(),
            }),
          )
          .max(10_000),
      }),
    )
    .max(100_000),
});

/**
 * Model names (normalised) to their priced offers in routing order, refreshed at most every 10 s:
 * in the background while the last catalog is under a minute old, else before answering.
 */
export class PriceBook {
  private offers = new Map<string, PricedOffer[]>();
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly buyer: Dispatcher,
    private readonly headers: Record<string, string>,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The priced offers of `model` in routing order, or undefined when it is unknown. A pinned
   * `peer@model` is the model's offers: the pin is applied with the key's policy.
   */
  async offersOf(model: string): Promise<PricedOffer[] | undefined> {
    const age = this.now() - this.fetchedAt;
    if (age > CACHE_MS) {
      this.loading ??= this.load().finally(() => {
        this.loading = undefined;
      });
      // A catalog just out of date answers while the new one loads: a request no longer waits
      // for the buyer's catalog once every 10 s (a p99 stall; docs/decisions/212-gateway-time-
      // before-forwarding.md). None yet, or one left from long ago, is waited for.
      if (age > STALE_MS) await this.loading;
    }
    const name = model.includes('@') ? model.slice(model.indexOf('@') + 1) : model;
    return this.offers.get(normalizeModelName(name));
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
      // A catalog sent in pieces declares no length: the bytes are counted as they come, and
      // the connection is given up at the limit.
      const bytes = await readStreamBody(response.body, MAX_CATALOG_BYTES);
      const catalog = catalogSchema.parse(JSON.parse(bytes.toString('utf8')));
      const offers = new Map<string, PricedOffer[]>();
      for (const entry of catalog.data) {
        const priced: PricedOffer[] = [];
        for (const peer of entry.peers) {
          if (!peer.prices) continue;
          priced.push({
            peerId: peer.peerId.toLowerCase().replace(/^0x/, ''),
            price: toPriceMicro(peer.prices),
            reputationScore: peer.reputationScore ?? null,
            eligible: peer.eligible ?? true,
          });
        }
        if (priced.length === 0) continue;
        for (const name of [entry.id, ...(entry.aliases ?? [])]) {
          offers.set(normalizeModelName(name), priced);
        }
      }
      this.offers = offers;
    } catch {
      // Keep the last catalog; an unknown model falls back to the configured maximum.
    } finally {
      this.fetchedAt = this.now();
    }
  }
}
