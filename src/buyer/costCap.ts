/**
 * The buyer's cost cap on a streamed answer (docs/decisions/120-one-amount-and-the-cost-cap.md): a seller that
 * ignores `max_tokens` is cut off once the output the buyer counts passes what the request's cap
 * pays for (plus the claim tolerance, so an honest seller whose tokenizer counts differently is
 * never cut). Bytes pass through unchanged, regrouped at event boundaries, so the client never
 * gets half an event; the cut ends the source with `max_cost_reached`, which becomes an error
 * event in the client's format (src/buyer/streamFailure.ts). The payment is capped separately (src/payments/buyer/checkClaim.ts).
 */
import { SvcError } from '../errors/index.js';
import { createStreamParser, formatOfProtocol, SseDecoder } from '../formats/index.js';
import {
  formatUsd,
  type MicroUsd,
  maxOutputTokensWithin,
  type TokenPriceMicro,
} from '../money/index.js';
import type { ApiProtocol } from '../network/index.js';
import { countTextTokens } from './tokenCount.js';

export interface CostCapInput {
  /** The most the buyer pays for this request; undefined: no cap (a free offer). */
  maxCostMicro: MicroUsd | undefined;
  price: TokenPriceMicro;
  /** The request's counted input (0 when there is no cap). */
  inputTokens: number;
  sellerProtocol: ApiProtocol;
}

/** Blank line ending an SSE event (LF or CRLF). */
const BOUNDARY = /\r?\n\r?\n/g;

/** Output tokens allowed past the cap's own count: the claim tolerance (10 % + 16 tokens). */
export function cutAfterTokens(maxOutputTokens: number): number {
  return maxOutputTokens + Math.max(16, Math.ceil(maxOutputTokens / 10));
}

/** Watches one streamed answer against its cost cap. */
export class CostCap {
  /** The answer passed the cap and was cut. */
  reached = false;
  /** Visible output tokens the buyer counted in what it passed on. */
  outputTokens = 0;
  private readonly limit: number | undefined;

  /** The cap, as `costUsd` text. */
  get maxCostUsd(): string {
    return formatUsd(this.input.maxCostMicro ?? 0n);
  }

  constructor(private readonly input: CostCapInput) {
    if (input.maxCostMicro === undefined || formatOfProtocol(input.sellerProtocol) === undefined) {
      return;
    }
    const maxOut = maxOutputTokensWithin(input.maxCostMicro, input.inputTokens, input.price);
    if (maxOut < Number.MAX_SAFE_INTEGER) this.limit = cutAfterTokens(maxOut);
  }

  /** The seller's SSE bytes, cut at the first event past the cap (then throws max_cost_reached). */
  watch(source: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
    const limit = this.limit;
    const format = formatOfProtocol(this.input.sellerProtocol);
    if (limit === undefined || format === undefined) return source;
    const parser = createStreamParser(format);
    const decoder = new SseDecoder();
    const utf8 = new TextDecoder();
    const cap = this;
    return (async function* () {
      let pending = Buffer.alloc(0);
      for await (const chunk of source) {
        pending = pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([pending, chunk]);
        // latin1 maps bytes 1:1 to characters, so string offsets are byte offsets.
        const text = pending.toString('latin1');
        let start = 0;
        let passed = 0;
        for (const match of text.matchAll(BOUNDARY)) {
          const end = match.index + match[0].length;
          const events = decoder.push(utf8.decode(pending.subarray(start, end)));
          for (const event of events) {
            for (const part of parser.push(event)) {
              if (part.type === 'block_delta') cap.outputTokens += countTextTokens(part.text);
            }
          }
          if (cap.outputTokens > limit) {
            cap.reached = true;
            if (passed > 0) yield pending.subarray(0, passed);
            throw new SvcError('max_cost_reached', { details: { maxCostUsd: cap.maxCostUsd } });
          }
          passed = end;
          start = end;
        }
        if (passed > 0) {
          yield pending.subarray(0, passed);
          pending = pending.subarray(passed);
        }
      }
      if (pending.length > 0) yield pending;
    })();
  }
}
