/** Reads and bounds-checks the `amount_usd` of a top-up request. */
import { z } from 'zod';
import { SvcError } from '../errors/index.js';
import { formatUsd, type MicroUsd, MoneyFormatError, parseUsd } from '../money/index.js';
import type { TopupBounds } from './types.js';

const bodySchema = z.object({ amount_usd: z.union([z.string(), z.number()]) });

/** The requested amount in micro-USD; 400 `topup_amount_invalid` naming the bounds otherwise. */
export function parseTopupAmount(body: unknown, bounds: TopupBounds): MicroUsd {
  const invalid = (why: string) =>
    new SvcError('topup_amount_invalid', {
      message: `${why} Send {"amount_usd": "<amount>"} with an amount from ${formatUsd(bounds.minMicro)} to ${formatUsd(bounds.maxMicro)} USD.`,
      details: {
        param: 'amount_usd',
        min_usd: formatUsd(bounds.minMicro),
        max_usd: formatUsd(bounds.maxMicro),
      },
    });
  const parsed = bodySchema.safeParse(body);
  if (!parsed.success) throw invalid('The body has no amount_usd.');
  const raw = parsed.data.amount_usd;
  let amount: MicroUsd;
  try {
    // Numbers are accepted the way JSON clients write them ("5" or 5), never rounded.
    amount = parseUsd(typeof raw === 'number' ? String(raw) : raw);
  } catch (error) {
    if (error instanceof MoneyFormatError)
      throw invalid(`amount_usd ${JSON.stringify(raw)} is not a USD amount.`);
    throw error;
  }
  if (amount < bounds.minMicro || amount > bounds.maxMicro) {
    throw invalid(`amount_usd ${formatUsd(amount)} is outside the allowed bounds.`);
  }
  return amount;
}

/** Bounds from the gateway config strings (`topupMinUsd`, `topupMaxUsd`). */
export function topupBounds(minUsd: string, maxUsd: string): TopupBounds {
  const minMicro = parseUsd(minUsd);
  const maxMicro = parseUsd(maxUsd);
  if (minMicro <= 0n || maxMicro < minMicro) {
    throw new SvcError('invalid_config', {
      message: `Top-up bounds must satisfy 0 < --topup-min-usd (${minUsd}) <= --topup-max-usd (${maxUsd}).`,
    });
  }
  return { minMicro, maxMicro };
}
