/** Money: integer micro-USD amounts, exact parsing/formatting, and token price arithmetic. */
export {
  ceilDiv,
  formatUsd,
  MICRO_PER_USD,
  type MicroUsd,
  MoneyFormatError,
  microToUsdNumber,
  type ParseUsdOptions,
  parseUsd,
  sumMicro,
  usdNumberToMicro,
} from './microUsd.js';
export {
  costOfUsage,
  isFreePrice,
  type MicroUsdPerMillion,
  maxCostOfRequest,
  maxOutputTokensWithin,
  rankingPrice,
  type TokenPriceMicro,
  type TokenPricing,
  type TokenUsage,
  toPriceMicro,
} from './pricing.js';
export { UNIT_TOKENS, unitPriceMicro, unitPricing, unitsOf, unitUsage } from './unitPricing.js';
