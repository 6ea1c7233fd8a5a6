/**
 * The one admission step of every seller request, text or media: a free slot in the provider's
 * concurrency (429 + Retry-After otherwise), a request id, the offer, the payment admitted for the
 * request's largest cost, the slot taken; then recording what the request is billed, once.
 */
import { randomUUID } from 'node:crypto';
import { SvcError } from '../../errors/index.js';
import {
  costOfUsage,
  type MicroUsd,
  type TokenPriceMicro,
  type TokenPricing,
  type TokenUsage,
} from '../../money/index.js';
import type { InboundRequest, SellerTrailer } from '../../network/index.js';
import type { SellerOffer } from '../payments.js';
import type { HandlerDeps } from './deps.js';
import type { SellerBody, SellerRoute } from './route.js';

/** How a request is priced. */
export interface Billing {
  pricing: TokenPricing;
  price: TokenPriceMicro;
  /** Price of one image or video (unit-billed media), as the receipt names it. */
  unitMicroUsd?: MicroUsd;
  /** Largest cost, admitted before relaying; undefined: not admitted (a free video queue call). */
  maxCost?: MicroUsd;
}

/** An admitted request: its slot and its one record. */
export interface Admission {
  requestId: string;
  /** Frees the provider slot (idempotent). */
  release(): void;
  /** Records `usage` as billed and returns the trailer fields claiming it. */
  bill(usage: TokenUsage): Promise<SellerTrailer>;
  /**
   * Records an admitted request that bills nothing at zero: it holds part of the channel lock
   * until it is recorded.
   */
  billNothing(): Promise<void>;
}

/** One admitted request on its way through its variant (text or media). */
export interface Admitted {
  request: InboundRequest;
  body: SellerBody;
  route: SellerRoute;
  admission: Admission;
}

const NO_USAGE: TokenUsage = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };

/** Admits `request`: throws 429 `seller_overloaded` or the payment's refusal (402...). */
export async function admit(
  deps: HandlerDeps,
  request: InboundRequest,
  route: SellerRoute,
  billing: Billing,
): Promise<Admission> {
  const { provider } = route;
  if (provider.load.active >= provider.config.maxConcurrency) {
    throw new SvcError('seller_overloaded', { headers: { 'retry-after': '1' } });
  }
  const requestId =
    typeof request.payment?.requestId === 'string' ? request.payment.requestId : randomUUID();
  const offer: SellerOffer = {
    sellerPeerId: deps.sellerPeerId,
    provider: provider.name,
    serviceId: route.model,
    pricing: billing.pricing,
  };
  const context = { requestId, buyerPeerId: request.peerId };
  if (billing.maxCost !== undefined) {
    await deps.payments.admit(request.payment, offer, billing.maxCost, context);
  }
  provider.load.active++;
  deps.onLoadChange();

  let released = false;
  let recorded = false;
  const record = async (usage: TokenUsage, costMicro: MicroUsd): Promise<void> => {
    if (recorded) return;
    recorded = true;
    await deps.payments
      .record(requestId, usage, costMicro, {
        ...context,
        offer,
        ...(request.payment ? { payment: request.payment } : {}),
      })
      .catch((error: unknown) =>
        deps.logger.warn({ err: String(error), requestId }, 'recording usage failed'),
      );
  };
  const release = () => {
    if (released) return;
    released = true;
    provider.load.active--;
    deps.onLoadChange();
  };
  // A cancelled or timed-out request frees its slot at once, even when the network layer never
  // gets as far as asking for its trailer (a stream gone before the reply head was written).
  request.signal.addEventListener('abort', release, { once: true });
  return {
    requestId,
    release,
    async bill(usage) {
      const costMicro = costOfUsage(usage, billing.price);
      await record(usage, costMicro);
      return { usage, costMicroUsd: costMicro.toString() };
    },
    async billNothing() {
      if (billing.maxCost !== undefined) await record(NO_USAGE, 0n);
    },
  };
}
