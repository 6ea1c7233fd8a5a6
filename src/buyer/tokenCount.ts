/**
 * Local token estimates (o200k_base through src/formats' tokenizer, so one encoder is loaded):
 * the payment bound of a request and the estimate when a seller reports no usage. The request
 * count lives in src/formats, where the gateway sizes reservations with the same rules.
 */
export {
  countRequestTokens,
  countRequestTokensAsync,
  countTextTokens,
  countTextTokensAsync,
  textOf,
} from '../formats/index.js';
