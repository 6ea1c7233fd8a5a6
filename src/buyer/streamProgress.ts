/**
 * Progress of a paid stream, journaled beside its open record so that a buyer killed mid-stream
 * pays, when it starts again, what it had delivered (docs/decisions/154-late-voucher-after-a-crash.md):
 * who paid, which seller, at what price, within which cap, and the buyer's own count of what went
 * out. Written at most every `PROGRESS_EVERY_MS` per stream (never for a shorter one), after a
 * chunk was handed to the client, so the hot path gains a clock read per chunk, not a write.
 */
import { z } from 'zod';
import {
  costOfUsage,
  type MicroUsd,
  type TokenPriceMicro,
  type TokenUsage,
} from '../money/index.js';
import { journal } from './commitCost.js';
import type { ProxyContext } from './context.js';
import type { RecordDraft } from './delivery.js';

/** Longest a stream's delivered part goes unjournaled (and the shortest stream journaled at all). */
export const PROGRESS_EVERY_MS = 250;

/** What a restarted buyer needs to pay a stream it was delivering. */
export interface StreamPayment {
  /** The identity whose channel paid the request. */
  identity: string;
  /** The seller. */
  peerId: string;
  price: TokenPriceMicro;
  /** The request's cap: never paid past it. */
  maxCostMicro: MicroUsd;
  /** Delivered so far, by the buyer's own count. */
  usage: TokenUsage;
}

const amount = z.string().regex(/^(0|[1-9][0-9]{0,30})$/);
const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const progressSchema = z.strictObject({
  identity: z.string().min(1).max(256),
  peerId: z.string().min(1).max(256),
  price: z.strictObject({ input: amount, output: amount, cachedInput: amount.optional() }),
  maxCostMicro: amount,
  usage: z.strictObject({ inputTokens: count, cachedInputTokens: count, outputTokens: count }),
});

/** The journal's text of a stream's progress. */
export function encodeStreamPayment(payment: StreamPayment): string {
  const { price, usage } = payment;
  return JSON.stringify({
    identity: payment.identity,
    peerId: payment.peerId,
    price: {
      input: price.inputMicroPerMillion.toString(),
      output: price.outputMicroPerMillion.toString(),
      ...(price.cachedInputMicroPerMillion !== undefined
        ? { cachedInput: price.cachedInputMicroPerMillion.toString() }
        : {}),
    },
    maxCostMicro: payment.maxCostMicro.toString(),
    usage: {
      inputTokens: usage.inputTokens,
      cachedInputTokens: usage.cachedInputTokens,
      outputTokens: usage.outputTokens,
    },
  });
}

/** Parses a journaled progress; undefined when it is not one (nothing can be paid from it). */
export function decodeStreamPayment(text: string): StreamPayment | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = progressSchema.safeParse(value);
  if (!parsed.success) return undefined;
  const { price, usage } = parsed.data;
  if (usage.cachedInputTokens > usage.inputTokens) return undefined;
  return {
    identity: parsed.data.identity,
    peerId: parsed.data.peerId,
    price: {
      inputMicroPerMillion: BigInt(price.input),
      outputMicroPerMillion: BigInt(price.output),
      ...(price.cachedInput !== undefined
        ? { cachedInputMicroPerMillion: BigInt(price.cachedInput) }
        : {}),
    },
    maxCostMicro: BigInt(parsed.data.maxCostMicro),
    usage,
  };
}

/**
 * What a journaled stream owes its seller: the delivered usage at the seller's price, capped at the
 * request's cap; nothing when no output went out (a failed answer is paid nothing,
 * docs/decisions/152-nothing-paid-for-failed-answers.md).
 */
export function deliveredCostMicro(payment: StreamPayment): MicroUsd {
  if (payment.usage.outputTokens === 0) return 0n;
  const cost = costOfUsage(payment.usage, payment.price);
  if (cost > payment.maxCostMicro) return payment.maxCostMicro;
  return cost;
}

/** Journals one paid stream's progress, throttled. */
export class ProgressJournal {
  private dueAt: number;
  private journaledOutput = 0;

  constructor(
    private readonly ctx: ProxyContext,
    private readonly draft: RecordDraft,
    private readonly payment: Omit<StreamPayment, 'usage'>,
    private readonly inputTokens: number,
    /** The buyer's count of the output handed on so far. */
    private readonly outputTokens: () => number,
  ) {
    this.dueAt = ctx.service.deps.clock() + PROGRESS_EVERY_MS;
  }

  /** Called after each chunk reaches the client: journals when due and something new went out. */
  tick(): void {
    const now = this.ctx.service.deps.clock();
    if (now < this.dueAt) return;
    this.dueAt = now + PROGRESS_EVERY_MS;
    const outputTokens = this.outputTokens();
    if (outputTokens === this.journaledOutput) return;
    this.journaledOutput = outputTokens;
    const usage = { inputTokens: this.inputTokens, cachedInputTokens: 0, outputTokens };
    journal(
      this.ctx,
      { ...this.draft, usage },
      0n,
      encodeStreamPayment({ ...this.payment, usage }),
    );
  }
}
