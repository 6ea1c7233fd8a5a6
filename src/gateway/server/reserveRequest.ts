/**
 * The reservation made before forwarding: sized to the request's own maximum cost, all or nothing,
 * when its model's prices are known (docs/decisions/121-reservations-sized-to-the-request.md),
 * else up to the configured maximum per request, whatever room there is. Far from every limit the
 * request is sized by a bound that counts no tokens; near one, exactly as counted
 * (docs/decisions/159-gateway-auth-and-sizing-without-counting.md).
 */
import type { IncomingMessage } from 'node:http';
import { SvcError } from '../../errors/index.js';
import { formatUsd, type MicroUsd } from '../../money/index.js';
import { requestMaxCost, requestMaxCostBound } from '../budget/requestMaxCost.js';
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

const allOrNothing = (amount: MicroUsd): Size => ({
  maxAmountMicro: amount,
  minAmountMicro: amount > 0n ? amount : 1n,
});

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

function reserved(result: ReserveResult): Reservation {
  if (!result.ok) throw spendLimitReached(result.refusal);
  return result.reservation;
}

/** Reserves on every budget of the key; `spend_limit_reached` when one has no room. */
export async function reserveRequest(
  deps: GatewayDeps,
  caller: Caller,
  req: IncomingMessage,
  json: Record<string, unknown> | null,
  model: string | undefined,
  requestId: string,
): Promise<Reservation> {
  const configured = deps.maxRequestCostMicro;
  const atMost = (amount: MicroUsd) => (amount < configured ? amount : configured);
  const unsized: Size = { maxAmountMicro: configured, minAmountMicro: 1n };
  const price = json && model ? await deps.prices.priceOf(model) : undefined;
  if (!json || !price) return reserved(await reserveOnce(deps, caller, requestId, unsized));
  const path = req.url ?? '/';
  const bound = requestMaxCostBound(path, json, price);
  if (bound === null) return reserved(await reserveOnce(deps, caller, requestId, unsized));
  // Free input: the bound is the exact size (only the input's count differs between them).
  const exactAlready = price.inputMicroPerMillion === 0n;
  const keyId = caller.key.id;
  if (exactAlready || !isNearLimit(keyId, deps.now())) {
    const size = allOrNothing(atMost(bound));
    if (!exactAlready) size.keepRoomMicro = size.maxAmountMicro * KEEP_ROOM_REQUESTS;
    const result = await reserveOnce(deps, caller, requestId, size);
    if (result.ok || exactAlready) return reserved(result);
    markNearLimit(keyId, deps.now());
  }
  const exact = requestMaxCost(path, json, price);
  const size = exact === null ? unsized : allOrNothing(atMost(exact));
  return reserved(await reserveOnce(deps, caller, requestId, size));
}

function spendLimitReached(refusal: BudgetRefusal): SvcError {
  const remaining = refusal.limitMicro - refusal.committedMicro;
  return new SvcError('spend_limit_reached', {
    message: `The ${refusal.period} ${refusal.level} budget has no room for this request.`,
    details: {
      level: refusal.level,
      period: refusal.period,
      limit_usd: formatUsd(refusal.limitMicro),
      spent_usd: formatUsd(refusal.spentMicro),
      remaining_usd: formatUsd(remaining > 0n ? remaining : 0n),
      resets_at: refusal.resetsAt === null ? null : new Date(refusal.resetsAt).toISOString(),
    },
  });
}
