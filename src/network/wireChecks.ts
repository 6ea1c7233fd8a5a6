/**
 * Fast acceptance checks for the JSON frames of `/svc/request/1` (decision 096). zod's
 * `safeParse` of a response head and trailer was ~5 % of the buyer's CPU per request. These
 * checks accept only values the zod schemas in requestWire.ts accept (a property test holds
 * them to it); anything they do not accept goes through zod, which either accepts it after all
 * or produces the usual error message. So what is accepted and every error stay as they were.
 */

const MAX_HEADER_NAME = 256;
const MAX_HEADER_VALUE = 16 * 1024;
const METHOD = /^[A-Z]{1,16}$/;
const COST = /^\d{1,30}$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Own keys all in `allowed` (zod strictObject), and none that would touch the prototype. */
function onlyKeys(value: Record<string, unknown>, allowed: readonly string[]): boolean {
  for (const key in value) {
    if (!Object.hasOwn(value, key) || !allowed.includes(key)) return false;
  }
  return true;
}

function isCount(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isHeaders(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  for (const name in value) {
    if (!Object.hasOwn(value, name) || name === '__proto__' || name.length > MAX_HEADER_NAME) {
      return false;
    }
    const text = value[name];
    if (typeof text !== 'string' || text.length > MAX_HEADER_VALUE) return false;
  }
  return true;
}

const REQUEST_HEAD_KEYS = ['method', 'path', 'headers', 'bodyLength', 'payment'] as const;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control range is the point
const PATH_CONTROL = /[\u0000-\u001f\u007f]/;

/** A request head that `requestHeadSchema` accepts unchanged. */
export function quickRequestHead(value: unknown): boolean {
  if (!isPlainObject(value) || !onlyKeys(value, REQUEST_HEAD_KEYS)) return false;
  const { method, path, headers, bodyLength, payment } = value;
  if (typeof method !== 'string' || !METHOD.test(method)) return false;
  if (typeof path !== 'string' || path.length > 4096 || !path.startsWith('/')) return false;
  if (PATH_CONTROL.test(path)) return false;
  if (!isCount(bodyLength) || !isHeaders(headers)) return false;
  if ('payment' in value) {
    // A record of anything (the payments module checks its contents).
    if (!isPlainObject(payment)) return false;
    for (const key in payment)
      if (!Object.hasOwn(payment, key) || key === '__proto__') return false;
  }
  return true;
}

const RESPONSE_HEAD_KEYS = ['status', 'headers'] as const;

/** A response head that `responseHeadSchema` accepts unchanged. */
export function quickResponseHead(value: unknown): boolean {
  if (!isPlainObject(value) || !onlyKeys(value, RESPONSE_HEAD_KEYS)) return false;
  const { status, headers } = value;
  return (
    typeof status === 'number' &&
    Number.isInteger(status) &&
    status >= 100 &&
    status <= 599 &&
    isHeaders(headers)
  );
}

const TRAILER_KEYS = ['usage', 'costMicroUsd', 'error', 'receipt'] as const;
const USAGE_KEYS = ['inputTokens', 'cachedInputTokens', 'outputTokens'] as const;
const USAGE_ALLOWED = [...USAGE_KEYS, 'reasoningTokens'] as const;

/** A trailer that `trailerSchema` accepts unchanged. */
export function quickTrailer(value: unknown): boolean {
  if (!isPlainObject(value) || !onlyKeys(value, TRAILER_KEYS)) return false;
  const { usage, costMicroUsd, error } = value;
  if ('usage' in value) {
    if (!isPlainObject(usage) || !onlyKeys(usage, USAGE_ALLOWED)) return false;
    for (const key of USAGE_KEYS) if (!isCount(usage[key])) return false;
    if ('reasoningTokens' in usage && !isCount(usage.reasoningTokens)) return false;
  }
  if ('costMicroUsd' in value && (typeof costMicroUsd !== 'string' || !COST.test(costMicroUsd))) {
    return false;
  }
  if ('error' in value && (typeof error !== 'string' || error.length > 4096)) return false;
  return !('receipt' in value) || quickReceipt(value.receipt);
}

const RECEIPT_KEYS = [
  'seller',
  'buyer',
  'serviceId',
  'requestHash',
  'responseHash',
  'inputTokens',
  'cachedInputTokens',
  'outputTokens',
  'reasoningTokens',
  'inputMicroUsdPerMillion',
  'cachedInputMicroUsdPerMillion',
  'outputMicroUsdPerMillion',
  'unitMicroUsd',
  'costMicroUsd',
  'timeMs',
  'signature',
] as const;
const ADDRESS = /^0x[0-9a-f]{40}$/;
const HASH = /^0x[0-9a-f]{64}$/;
const SIGNATURE = /^0x[0-9a-f]{130}$/;
const AMOUNT = /^(?:0|[1-9]\d{0,29})$/;
/** Plain service ids: the printable ASCII every announced id uses (others go through zod). */
const PLAIN_SERVICE_ID = /^[\x20-\x7e]{0,256}$/;

function matches(value: unknown, pattern: RegExp): boolean {
  return typeof value === 'string' && pattern.test(value);
}

/** A receipt that `receiptSchema` (src/network/receipts.ts) accepts unchanged. */
export function quickReceipt(value: unknown): boolean {
  if (!isPlainObject(value) || !onlyKeys(value, RECEIPT_KEYS)) return false;
  return (
    matches(value.seller, ADDRESS) &&
    matches(value.buyer, ADDRESS) &&
    matches(value.serviceId, PLAIN_SERVICE_ID) &&
    matches(value.requestHash, HASH) &&
    matches(value.responseHash, HASH) &&
    isCount(value.inputTokens) &&
    isCount(value.cachedInputTokens) &&
    isCount(value.outputTokens) &&
    isCount(value.reasoningTokens) &&
    matches(value.inputMicroUsdPerMillion, AMOUNT) &&
    matches(value.cachedInputMicroUsdPerMillion, AMOUNT) &&
    matches(value.outputMicroUsdPerMillion, AMOUNT) &&
    matches(value.unitMicroUsd, AMOUNT) &&
    matches(value.costMicroUsd, AMOUNT) &&
    isCount(value.timeMs) &&
    matches(value.signature, SIGNATURE)
  );
}
