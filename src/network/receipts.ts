/**
 * Receipts anyone can check (docs/decisions/168-receipts-anyone-can-check.md): the contract both
 * sides of `/svc/request/1` import. A seller signs, with its peer key, one receipt per answer in
 * the trailer: the hashes of the exact request it received and the exact response it sent, the
 * service, the usage and cost it claims, the price it applied, the time and the buyer. The buyer
 * checks it against what it sent and received; anyone holding the bytes checks it again later.
 */
import { type Hex, hexToBytes } from 'viem';
import { z } from 'zod';
import type { ApiProtocol } from '../formats/index.js';
import { isSignedBy, type PeerId, PresignedSigner } from '../identity/index.js';
import type { MicroUsd, TokenPriceMicro, TokenUsage } from '../money/index.js';
import {
  type ReceiptFields,
  receiptDigest,
  receiptDigestBytes,
  requestHash,
  responseHash,
} from './receiptHashes.js';
import { quickReceipt } from './wireChecks.js';

/** A signed receipt, as it travels in the trailer's `receipt` and in audit bundles. */
export interface Receipt extends ReceiptFields {
  /** 65 bytes (r, s, v): the seller's secp256k1 signature of `receiptDigest`, with a low `s`. */
  signature: Hex;
}

/** Longest service id a receipt carries (announced ones are at most 200 characters). */
export const MAX_RECEIPT_SERVICE_ID = 256;

const HASH = /^0x[0-9a-f]{64}$/;
const ADDRESS = /^0x[0-9a-f]{40}$/;
const SIGNATURE = /^0x[0-9a-f]{130}$/;
/** Canonical decimal amounts (no leading zeros), small enough for uint256. */
const AMOUNT = /^(?:0|[1-9]\d{0,29})$/;
// Service ids are printed by `svc audit show`: no control characters (a terminal escape).
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control range is the point
const PRINTABLE = /^[^\u0000-\u001f\u007f-\u009f]*$/;

const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const amount = z.string().regex(AMOUNT);
const address = z.string().regex(ADDRESS) as unknown as z.ZodType<Hex>;
const hash = z.string().regex(HASH) as unknown as z.ZodType<Hex>;

/** The wire shape of a receipt: every field bounded, nothing else allowed. */
export const receiptSchema = z.strictObject({
  seller: address,
  buyer: address,
  serviceId: z.string().max(MAX_RECEIPT_SERVICE_ID).regex(PRINTABLE),
  requestHash: hash,
  responseHash: hash,
  inputTokens: count,
  cachedInputTokens: count,
  outputTokens: count,
  reasoningTokens: count,
  inputMicroUsdPerMillion: amount,
  cachedInputMicroUsdPerMillion: amount,
  outputMicroUsdPerMillion: amount,
  unitMicroUsd: amount,
  costMicroUsd: amount,
  timeMs: count,
  signature: z.string().regex(SIGNATURE) as unknown as z.ZodType<Hex>,
}) satisfies z.ZodType<Receipt>;

/** True when a receipt can name `serviceId` (announced ones always can). */
export function fitsReceipt(serviceId: string): boolean {
  return serviceId.length <= MAX_RECEIPT_SERVICE_ID && PRINTABLE.test(serviceId);
}

/**
 * Turns the fields of one answer into its signed receipt. The seller's is `receiptIssuer(key)`;
 * a test's hostile seller passes its own (src/seller/testing/hostileReceipts.ts).
 */
export type ReceiptIssuer = (fields: ReceiptFields) => Receipt;

/**
 * The honest issuer: signs with the seller's identity key (`0x` and 64 hex digits), from a pool
 * of presigned nonces (docs/decisions/195-presigned-nonces.md): the signature is off the answer's
 * critical path but for a few µs.
 */
export function receiptIssuer(privateKey: Hex): ReceiptIssuer {
  const signer = new PresignedSigner(hexToBytes(privateKey));
  return (fields) => ({ ...fields, signature: signer.sign(receiptDigestBytes(fields)) });
}

/** What the seller's pipeline knows of an answer beyond its bytes: the service and the price it applied. */
export interface ReceiptTerms {
  serviceId: string;
  price: TokenPriceMicro;
  /** Price of one image or video, for unit-billed answers. */
  unitMicroUsd?: MicroUsd;
}

/** The usage and cost claimed in the trailer (absent: nothing claimed, i.e. zero). */
export interface ReceiptClaims {
  usage?: TokenUsage;
  costMicroUsd?: string;
}

const NO_TERMS: ReceiptTerms = {
  serviceId: '',
  price: { inputMicroPerMillion: 0n, outputMicroPerMillion: 0n },
};

/** The fields of one answer's receipt: hashes, claims equal to the trailer's, terms, time. */
export function receiptFields(answer: {
  seller: PeerId;
  buyer: PeerId;
  requestHash: Hex;
  responseHash: Hex;
  terms: ReceiptTerms | undefined;
  claims: ReceiptClaims;
  timeMs: number;
}): ReceiptFields {
  const { serviceId, price, unitMicroUsd } = answer.terms ?? NO_TERMS;
  const usage = answer.claims.usage;
  return {
    seller: `0x${answer.seller}`,
    buyer: `0x${answer.buyer}`,
    serviceId,
    requestHash: answer.requestHash,
    responseHash: answer.responseHash,
    inputTokens: usage?.inputTokens ?? 0,
    cachedInputTokens: usage?.cachedInputTokens ?? 0,
    outputTokens: usage?.outputTokens ?? 0,
    reasoningTokens: usage?.reasoningTokens ?? 0,
    inputMicroUsdPerMillion: price.inputMicroPerMillion.toString(),
    // The price applied to cached tokens: the input price when none is advertised.
    cachedInputMicroUsdPerMillion: (
      price.cachedInputMicroPerMillion ?? price.inputMicroPerMillion
    ).toString(),
    outputMicroUsdPerMillion: price.outputMicroPerMillion.toString(),
    unitMicroUsd: (unitMicroUsd ?? 0n).toString(),
    costMicroUsd: BigInt(answer.claims.costMicroUsd ?? '0').toString(),
    timeMs: answer.timeMs,
  };
}

/**
 * One answer's receipt with the bytes it covers, as the buyer keeps it for an audit
 * (src/buyer/evidence.ts): `verifyReceipt(receipt, { seller: peerId, request, response })` holds.
 */
export interface AnswerEvidence {
  receipt: Receipt;
  /** The request as sent: `receipt.requestHash` is `requestHash(method, path, body)`. */
  request: { method: string; path: string; body: Uint8Array };
  /** The response as received, before any translation: `receipt.responseHash` covers it. */
  response: { status: number; body: Uint8Array };
  /** The API format the seller answered in (the format of `response.body`). */
  sellerProtocol: ApiProtocol;
  peerId: PeerId;
  serviceId: string;
}

/** Why a receipt is refused (each a reason a test names). */
export type ReceiptRefusal =
  | 'missing'
  | 'malformed'
  | 'wrong_seller'
  | 'wrong_buyer'
  | 'wrong_service'
  | 'request_mismatch'
  | 'response_mismatch'
  | 'claims_mismatch'
  | 'time_out_of_range'
  | 'bad_signature';

export type ReceiptCheck =
  | { ok: true; receipt: Receipt }
  | { ok: false; reason: ReceiptRefusal; message: string };

/**
 * What the checker knows and the receipt must match; each one left out is not checked (the
 * signature always is). Peer ids in any accepted spelling.
 */
export interface ReceiptExpectations {
  /** Who must have signed: without it, whoever the receipt names as `seller`. */
  seller?: string;
  buyer?: string;
  serviceId?: string;
  /** The request hash, or the request to hash. */
  requestHash?: Hex;
  request?: { method: string; path: string; body: Uint8Array };
  /** The response hash, or the response to hash. */
  responseHash?: Hex;
  response?: { status: number; body: Uint8Array };
  /** The usage and cost the trailer claimed. */
  claims?: ReceiptClaims;
  /** The window the signing time must fall in (unix ms, inclusive). */
  timeMs?: { from: number; to: number };
}

function refuse(reason: ReceiptRefusal, message: string): ReceiptCheck {
  return { ok: false, reason, message };
}

function sameAddress(address: Hex, peerId: string): boolean {
  return address.slice(2) === peerId.replace(/^0x/i, '').toLowerCase();
}

function claimsMatch(receipt: Receipt, claims: ReceiptClaims): boolean {
  const usage = claims.usage;
  let cost: bigint;
  try {
    cost = BigInt(claims.costMicroUsd ?? '0');
  } catch {
    return false;
  }
  return (
    receipt.inputTokens === (usage?.inputTokens ?? 0) &&
    receipt.cachedInputTokens === (usage?.cachedInputTokens ?? 0) &&
    receipt.outputTokens === (usage?.outputTokens ?? 0) &&
    receipt.reasoningTokens === (usage?.reasoningTokens ?? 0) &&
    BigInt(receipt.costMicroUsd) === cost
  );
}

/** The first expectation `receipt` fails, cheapest first; undefined when it meets them all. */
function mismatch(receipt: Receipt, expected: ReceiptExpectations): ReceiptCheck | undefined {
  if (expected.seller !== undefined && !sameAddress(receipt.seller, expected.seller))
    return refuse('wrong_seller', `the receipt names seller ${receipt.seller}`);
  if (expected.buyer !== undefined && !sameAddress(receipt.buyer, expected.buyer))
    return refuse('wrong_buyer', `the receipt names buyer ${receipt.buyer}`);
  if (expected.serviceId !== undefined && receipt.serviceId !== expected.serviceId)
    return refuse('wrong_service', `the receipt names service "${receipt.serviceId}"`);
  if (expected.claims !== undefined && !claimsMatch(receipt, expected.claims))
    return refuse('claims_mismatch', 'the receipt claims other usage or cost than the trailer');
  const { timeMs } = expected;
  if (timeMs !== undefined && (receipt.timeMs < timeMs.from || receipt.timeMs > timeMs.to))
    return refuse('time_out_of_range', `the receipt is dated ${receipt.timeMs}`);
  const { request, response } = expected;
  const sent =
    expected.requestHash ??
    (request ? requestHash(request.method, request.path, request.body) : undefined);
  if (sent !== undefined && receipt.requestHash !== sent)
    return refuse('request_mismatch', 'the receipt covers another request than the one sent');
  const received =
    expected.responseHash ?? (response ? responseHash(response.status, response.body) : undefined);
  if (received !== undefined && receipt.responseHash !== received)
    return refuse('response_mismatch', 'the receipt covers another response than the one received');
  return undefined;
}

/**
 * Checks a receipt (anything: it comes from a stranger): its shape, each expectation given,
 * then that the key of the receipt's `seller` signed it, in the form the payments contract
 * accepts (low `s`). Never throws.
 */
export function verifyReceipt(receipt: unknown, expected: ReceiptExpectations = {}): ReceiptCheck {
  if (receipt === undefined || receipt === null) return refuse('missing', 'no receipt');
  let valid: Receipt;
  if (quickReceipt(receipt)) valid = receipt as Receipt;
  else {
    const parsed = receiptSchema.safeParse(receipt);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return refuse('malformed', `${issue?.path.join('.') || 'receipt'}: ${issue?.message}`);
    }
    valid = parsed.data;
  }
  const failed = mismatch(valid, expected);
  if (failed) return failed;
  const { signature, ...fields } = valid;
  if (!isSignedBy(receiptDigest(fields), signature, valid.seller))
    return refuse('bad_signature', `the receipt is not signed by ${valid.seller}`);
  return { ok: true, receipt: valid };
}
