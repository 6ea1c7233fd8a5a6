/**
 * The reservation made before forwarding: sized to the request's own maximum cost at the offers
 * it may use (docs/decisions/121-reservations-sized-to-the-request.md,
 * docs/decisions/169-reservations-priced-at-the-route.md), all or nothing, when its model's
 * offers are known, else up to the configured maximum per request, whatever room there is. Far
 * from every limit the request is sized by a bound that counts no tokens, at the dearest offer it
 * may use, so the buyer may fail over to any of them; near one, exactly as counted, at the route
 * the buyer takes (at least what the cheapest offer needs), and the buyer fails over only to
 * offers that fit (docs/decisions/159-gateway-auth-and-sizing-without-counting.md).
 */
import type { IncomingMessage } from 'node:http';
import { SvcError } from '../../errors/index.js';
import {
  formatUsd,
  type MicroUsd,
  maxOutputTokensWithin,
  type TokenPriceMicro,
} from '../../money/index.js';
import { MAX_TOKENS_THAT_FIT } from '../../protocol/index.js';
import { costOfSize, type RequestSize, requestSize } from '../budget/requestMaxCost.js';
import { type PricedOffer, routeOffers } from '../budget/routeOffers.js';
import type { RoutingPolicy } from '../policy/types.js';
import type { BudgetRefusal, Reservation, ReserveResult } from '../store/types.js';
import { type Caller, storeCall } from './authenticate.js';
import type { GatewayDeps } from './deps.js';

/**
 * A bounded reservation must leave room for this many more of its size on every limited level;
 * closer to a limit, requests are sized exactly, so admission there is decided as if every request
 * had been (exactly N of many concurrent served when there is room for N).
 */
export const KEEP_ROOM_REQUESTS = 256n;
/** After a bounded reservation of a key was refused, its requests are sized exactly this long. */
const NEAR_LIMIT_MS = 10_000;
const NEAR_LIMIT_KEYS_MAX = 10_000;

/** Keys near a limit, until when: a hint that only saves the bounded attempt. */
const nearLimit = new Map<string, number>();

function isNearLimit(keyId: string, now: number): boolean {
  const until = nearLimit.get(keyId);
  if (until === undefined) return false;
  if (until > now) return true;
  nearLimit.delete(keyId);
  return false;
}

function markNearLimit(keyId: string, now: number): void {
  if (nearLimit.size >= NEAR_LIMIT_KEYS_MAX) nearLimit.clear();
  nearLimit.set(keyId, now + NEAR_LIMIT_MS);
}

interface Size {
  maxAmountMicro: MicroUsd;
  minAmountMicro: MicroUsd;
  keepRoomMicro?: MicroUsd;
}

/** What a request needs: its route, its cheapest offer, the request's size. */
interface Need {
  size: RequestSize;
  cheapest: TokenPriceMicro;
}

function reserveOnce(
  deps: GatewayDeps,
  caller: Caller,
  requestId: string,
  size: Size,
): Promise<ReserveResult> {
  return storeCall(() =>
    deps.store.reserve({
      reservationId: requestId,
      keyId: caller.key.id,
      ...size,
      now: deps.now(),
    }),
  );
}

function reserved(result: ReserveResult, need?: Need): Reservation {
  if (!result.ok) throw spendLimitReached(result.refusal, need);
  return result.reservation;
}

/** The request: its body, the model it names, the key's policy and a pinned seller. */
export interface ReserveInput {
  json: Record<string, unknown> | null;
  model: string | undefined;
  policy: RoutingPolicy;
  pinnedPeer: string | undefined;
}

/** What `size` costs at the route (the first offer), the cheapest and the dearest offer. */
function costsAt(size: RequestSize, offers: PricedOffer[]) {
  const costs = offers.map((offer) => costOfSize(size, offer.price));
  let cheapest = 0;
  let dearest = 0;
  for (let i = 1; i < costs.length; i++) {
    if (costs[i]! < costs[cheapest]!) cheapest = i;
    if (costs[i]! > costs[dearest]!) dearest = i;
  }
  return {
    route: costs[0]!,
    cheapest: costs[cheapest]!,
    cheapestAt: cheapest,
    dearest: costs[dearest]!,
  };
}

/** A reservation, and the max tokens the request must be lowered to when the room was short. */
export interface Reserved {
  reservation: Reservation;
  /** Set when the client's max tokens do not all fit in what was left (near a limit). */
  maxOutputTokens?: number;
}

/**
 * Reserves on every budget of the key; `spend_limit_reached` when one has no room. Near a limit a
 * request whose max tokens do not all fit is still served with fewer, as many as the room pays
 * for (docs/decisions/170-max-tokens-under-a-cost-cap.md); one without max tokens is refused,
 * saying how many fit.
 */
export async function reserveRequest(
  deps: GatewayDeps,
  caller: Caller,
  req: IncomingMessage,
  input: ReserveInput,
  requestId: string,
): Promise<Reserved> {
  const { json, model, policy, pinnedPeer } = input;
  const configured = deps.maxRequestCostMicro;
  const atMost = (amount: MicroUsd) => (amount < configured ? amount : configured);
  const unsized: Size = { maxAmountMicro: configured, minAmountMicro: 1n };
  const known = json && model ? await deps.prices.offersOf(model) : undefined;
  const pinned =
    pinnedPeer ?? (model?.includes('@') ? model.slice(0, model.indexOf('@')) : undefined);
  const offers = known ? routeOffers(known, policy, pinned) : [];
  const path = req.url ?? '/';
  const bound = json && offers.length > 0 ? requestSize(path, json, 'bound') : null;
  if (!json || !bound)
    return { reservation: reserved(await reserveOnce(deps, caller, requestId, unsized)) };
  const keyId = caller.key.id;
  if (!isNearLimit(keyId, deps.now())) {
    const dearest = atMost(costsAt(bound, offers).dearest);
    const size: Size = {
      maxAmountMicro: dearest,
      minAmountMicro: dearest > 0n ? dearest : 1n,
      keepRoomMicro: dearest * KEEP_ROOM_REQUESTS,
    };
    const result = await reserveOnce(deps, caller, requestId, size);
    if (result.ok) return { reservation: result.reservation };
    markNearLimit(keyId, deps.now());
  }
  // Free input costs nothing whatever its count: the bound is exact then.
  const inputPriced = offers.some((offer) => offer.price.inputMicroPerMillion > 0n);
  const exact = inputPriced ? requestSize(path, json, 'counted') : bound;
  if (!exact) return { reservation: reserved(await reserveOnce(deps, caller, requestId, unsized)) };
  const { route, cheapest, cheapestAt } = costsAt(exact, offers);
  const cheapestPrice = offers[cheapestAt]!.price;
  const need: Need = { size: exact, cheapest: cheapestPrice };
  // A client that set max tokens is served with fewer when only that much is left: at least its
  // input and one output token at the cheapest offer. Without max tokens, all or nothing.
  const least = exact.maxTokensSet
    ? costOfSize({ ...exact, outputTokens: 1 }, cheapestPrice)
    : cheapest;
  const size: Size = {
    maxAmountMicro: atMost(route),
    minAmountMicro: atMost(least) > 0n ? atMost(least) : 1n,
  };
  const reservation = reserved(await reserveOnce(deps, caller, requestId, size), need);
  // A request without max tokens is never lowered (the buyer skips what does not fit its default).
  if (reservation.amountMicro >= route || !exact.maxTokensSet) return { reservation };
  // As many output tokens as the amount pays for at the route, else at the cheapest offer.
  const within = (price: TokenPriceMicro) =>
    maxOutputTokensWithin(reservation.amountMicro, exact.inputTokens, price);
  const lowered = within(offers[0]!.price) || within(cheapestPrice);
  return lowered < exact.outputTokens ? { reservation, maxOutputTokens: lowered } : { reservation };
}

/** The sentence and detail of a refusal saying what fits (docs/decisions/170-max-tokens-under-a-cost-cap.md). */
function whatFits(
  remaining: MicroUsd,
  need: Need,
  scope: string,
): {
  sentence: string;
  fit: number;
} {
  const fit = maxOutputTokensWithin(remaining, need.size.inputTokens, need.cheapest);
  const asked = need.size.maxTokensSet
    ? `You requested up to ${need.size.outputTokens} output tokens`
    : `This request may use up to ${need.size.outputTokens} output tokens (the default when max_tokens is not set)`;
  const sentence =
    fit > 0
      ? `${asked}, but the ${scope} budget can only afford ${fit} at the cheapest eligible seller's price. Set max_tokens to ${fit} or less.`
      : `The ${scope} budget has no room even for this request's input at the cheapest eligible seller's price.`;
  return { sentence, fit };
}

function spendLimitReached(refusal: BudgetRefusal, need?: Need): SvcError {
  const left = refusal.limitMicro - refusal.committedMicro;
  const remaining = left > 0n ? left : 0n;
  const scope = `${refusal.period} ${refusal.level}`;
  const fits = need ? whatFits(remaining, need, scope) : undefined;
  return new SvcError('spend_limit_reached', {
    message: fits?.sentence ?? `The ${scope} budget has no room for this request.`,
    details: {
      level: refusal.level,
      period: refusal.period,
      limit_usd: formatUsd(refusal.limitMicro),
      spent_usd: formatUsd(refusal.spentMicro),
      remaining_usd: formatUsd(remaining),
      resets_at: refusal.resetsAt === null ? null : new Date(refusal.resetsAt).toISOString(),
      ...(fits ? { [MAX_TOKENS_THAT_FIT]: fits.fit } : {}),
    },
  });
}
