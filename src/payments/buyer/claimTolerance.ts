/**
 * The tolerance of one usage claim (decision 033). The buyer checks sellers' usage claims against its own count under o200k_base, OpenAI's
 * tokenizer (decision 033). Other vendors' tokenizers count the same text as more tokens — Claude
 * models by up to about a third, open-weight families by up to a fifth — so an honest seller of
 * those models would look like a cheat under a tolerance made for OpenAI models. The allowance is
 * the extra percent, on top of `claimTolerancePercent`, for the model family of the service id.
 */
import type { ClaimTolerance } from './checkClaim.js';

/** Families whose tokenizer is o200k_base or cl100k_base: no allowance. */
const OPENAI_FAMILY = /(^|[/:@])(gpt|chatgpt|o[1-9]|text-embedding|davinci|babbage|codex)/i;
const CLAUDE_FAMILY = /claude|anthropic/i;

/** Extra percent for Claude models (their tokenizer counts up to ~35 % more than o200k_base). */
export const CLAUDE_ALLOWANCE_PERCENT = 35;
/** Extra percent for any other model (Llama, Mistral, Qwen, Gemini, ... up to ~20 % more). */
export const OTHER_ALLOWANCE_PERCENT = 20;

/** Extra claim tolerance (percent) for a service id; ids of unknown families get the generic one. */
export function tokenizerAllowancePercent(serviceId: string): number {
  if (CLAUDE_FAMILY.test(serviceId)) return CLAUDE_ALLOWANCE_PERCENT;
  if (OPENAI_FAMILY.test(serviceId)) return 0;
  return OTHER_ALLOWANCE_PERCENT;
}

/** The tolerance of one request: exact for units, widened by the model's tokenizer family. */
export function claimToleranceFor(
  base: ClaimTolerance,
  served: { serviceId?: string; units?: boolean },
): ClaimTolerance {
  if (served.units) return { percent: 0, slackTokens: 0 };
  if (served.serviceId === undefined) return base;
  return { ...base, percent: base.percent + tokenizerAllowancePercent(served.serviceId) };
}
