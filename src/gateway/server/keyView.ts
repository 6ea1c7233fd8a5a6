/** `GET /v1/key`: `{data:{...}}`, 6-decimal USD strings, ISO timestamps with ms. */
import { formatUsd } from '../../money/index.js';
import { effectiveKeyLimits } from '../budget/effectiveLimits.js';
import { type GatewayStore, type KeyRecord, PERIODS, type Period } from '../store/types.js';

export interface LimitView {
  limit_usd: string | null;
  spent_usd: string;
  remaining_usd: string | null;
}

export interface KeyView {
  data: {
    id: string;
    label: string;
    created_at: string;
    expires_at: string | null;
    topup_enabled: boolean;
    buyer_address: string;
    usage: {
      requests: number;
      spent_usd: string;
      topped_up_usd: string;
      input_tokens: number;
      cached_input_tokens: number;
      output_tokens: number;
    };
    limits: Record<Period, LimitView>;
  };
}

/** Builds the view of `key` at `now`; `buyerAddress` is its identity's wallet address. */
export async function keyView(
  store: GatewayStore,
  key: KeyRecord,
  buyerAddress: string,
  now: number,
): Promise<KeyView> {
  const [usage, spend] = await Promise.all([
    store.keyUsage(key.id),
    store.periodSpend('key', key.id, now),
  ]);
  const limits = effectiveKeyLimits(key.adminLimits, key.ownerLimits);
  const view = {} as Record<Period, LimitView>;
  for (const period of PERIODS) {
    const limit = limits[period];
    const spent = spend[period];
    view[period] = {
      limit_usd: limit === null ? null : formatUsd(limit),
      spent_usd: formatUsd(spent),
      remaining_usd: limit === null ? null : formatUsd(limit > spent ? limit - spent : 0n),
    };
  }
  return {
    data: {
      id: key.id,
      label: key.label,
      created_at: new Date(key.createdAt).toISOString(),
      expires_at: key.expiresAt === null ? null : new Date(key.expiresAt).toISOString(),
      topup_enabled: key.topupEnabled,
      buyer_address: buyerAddress,
      usage: {
        requests: usage.requests,
        spent_usd: formatUsd(usage.spentMicro),
        topped_up_usd: formatUsd(key.toppedUpMicro),
        input_tokens: usage.inputTokens,
        cached_input_tokens: usage.cachedInputTokens,
        output_tokens: usage.outputTokens,
      },
      limits: view,
    },
  };
}
