/**
 * Wire messages between buyer and seller payments (decision 032):
 * - `PaymentObject`: what the buyer puts in `SellerRequest.payment` for a paid request — the
 *   channel, a reserve authorisation when the channel must be opened or its lock raised, and the
 *   latest cumulative voucher (covering earlier requests).
 * - `VoucherMessage` on libp2p protocol `/svc/voucher/1`: the voucher the buyer signs when a
 *   request completes, sent at once so the seller need not wait for the next request.
 * Amounts are decimal strings of integer micro-USD; everything is validated with zod.
 */
import type { Address, Hex } from 'viem';
import { z } from 'zod';
import { SvcError } from '../errors/index.js';

/** libp2p protocol id for voucher delivery. */
export const VOUCHER_PROTOCOL = '/svc/voucher/1';
/** Version carried in every payment message. */
export const PAYMENT_WIRE_VERSION = 1;
/** Largest accepted encoded voucher message. */
export const MAX_VOUCHER_MESSAGE_BYTES = 4096;

const hex32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'expected 32 bytes of hex');
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 0x-prefixed address');
const signature = z.string().regex(/^0x[0-9a-fA-F]{130}$/, 'expected a 65-byte signature');
const amount = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,30})$/, 'expected an integer amount in micro-USD');

export const signedVoucherSchema = z.strictObject({
  cumulativeAmount: amount,
  signature,
});

export const reserveAuthorisationSchema = z.strictObject({
  /** The channel's total lock this authorisation allows. */
  maxAmount: amount,
  /** Unix seconds. */
  deadline: amount,
  signature,
});

export const paymentObjectSchema = z.strictObject({
  v: z.literal(PAYMENT_WIRE_VERSION),
  chainId: z.number().int().positive(),
  paymentsContract: address,
  buyer: address,
  channelId: hex32,
  salt: hex32,
  /** Buyer's id for this request; the seller's `record()` and the buyer's voucher carry it. */
  requestId: z.string().min(1).max(128),
  /** The most this request may cost (the buyer caps max tokens to it). */
  maxCostMicro: amount,
  reserve: reserveAuthorisationSchema.optional(),
  voucher: signedVoucherSchema.optional(),
});

export const voucherMessageSchema = z.strictObject({
  v: z.literal(PAYMENT_WIRE_VERSION),
  channelId: hex32,
  requestId: z.string().min(1).max(128),
  /** What this request added, as the buyer accepted it. */
  amountMicro: amount,
  cumulativeAmount: amount,
  signature,
});

export const voucherReplySchema = z.strictObject({
  v: z.literal(PAYMENT_WIRE_VERSION),
  ok: z.boolean(),
  error: z.string().optional(),
});

/** Payment fields of one paid request (`SellerRequest.payment`). */
export interface PaymentObject {
  v: 1;
  chainId: number;
  paymentsContract: Address;
  buyer: Address;
  channelId: Hex;
  salt: Hex;
  requestId: string;
  maxCostMicro: string;
  reserve?: { maxAmount: string; deadline: string; signature: Hex };
  voucher?: { cumulativeAmount: string; signature: Hex };
}

/** A voucher for one completed request (`/svc/voucher/1`). */
export interface VoucherMessage {
  v: 1;
  channelId: Hex;
  requestId: string;
  amountMicro: string;
  cumulativeAmount: string;
  signature: Hex;
}

/** The seller's answer on `/svc/voucher/1`. */
export interface VoucherReply {
  v: 1;
  ok: boolean;
  error?: string;
}

function invalid(what: string, error: unknown): SvcError {
  const issue = error instanceof z.ZodError ? error.issues[0] : undefined;
  const where = issue ? ` (${issue.path.join('.') || 'root'}: ${issue.message})` : '';
  return new SvcError('payment_invalid', {
    message: `The ${what} is malformed${where}.`,
    details: { reason: 'malformed' },
    cause: error,
  });
}

/** Validates an untrusted `SellerRequest.payment`. Throws SvcError `payment_invalid`. */
export function parsePaymentObject(value: unknown): PaymentObject {
  const result = paymentObjectSchema.safeParse(value);
  if (!result.success) throw invalid('payment object', result.error);
  return result.data as PaymentObject;
}

/** Encodes a voucher message as UTF-8 JSON bytes. */
export function encodeVoucherMessage(message: VoucherMessage): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(message));
}

/** Decodes and validates voucher message bytes. Throws SvcError `payment_invalid`. */
export function decodeVoucherMessage(bytes: Uint8Array): VoucherMessage {
  if (bytes.byteLength > MAX_VOUCHER_MESSAGE_BYTES) {
    throw new SvcError('payment_invalid', {
      message: 'The voucher message is too large.',
      details: { reason: 'malformed' },
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    throw invalid('voucher message', error);
  }
  const result = voucherMessageSchema.safeParse(value);
  if (!result.success) throw invalid('voucher message', result.error);
  return result.data as VoucherMessage;
}

export function encodeVoucherReply(reply: VoucherReply): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(reply));
}

export function decodeVoucherReply(bytes: Uint8Array): VoucherReply {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch (error) {
    throw invalid('voucher reply', error);
  }
  const result = voucherReplySchema.safeParse(value);
  if (!result.success) throw invalid('voucher reply', result.error);
  return result.data as VoucherReply;
}

/**
 * Sends a voucher over any request/response byte exchange — e.g. one libp2p stream on
 * `VOUCHER_PROTOCOL` whose handler is `SellerPaymentService.handleVoucherBytes` — and returns the
 * seller's reply. Failures to deliver are not fatal: the next request's payment object carries
 * the same voucher.
 */
export async function deliverVoucher(
  send: (bytes: Uint8Array) => Promise<Uint8Array>,
  voucher: VoucherMessage,
): Promise<VoucherReply> {
  return decodeVoucherReply(await send(encodeVoucherMessage(voucher)));
}
