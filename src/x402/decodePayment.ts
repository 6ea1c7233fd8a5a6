/** Decodes and shape-checks a PAYMENT-SIGNATURE header (base64 JSON, x402 v2, exact EIP-3009). */
import { decodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import type { Address, Hex } from 'viem';
import { z } from 'zod';
import { X402_VERSION } from './constants.js';
import { refusePayment } from './refusal.js';

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
const uintString = z.string().regex(/^\d{1,78}$/);
const hex32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/);

const requirementsSchema = z.object({
  scheme: z.string(),
  network: z.string().regex(/^[^:]+:.+$/),
  asset: z.string(),
  amount: z.string(),
  payTo: z.string(),
  maxTimeoutSeconds: z.number(),
  extra: z.record(z.string(), z.unknown()).default({}),
});

const payloadSchema = z.object({
  x402Version: z.number(),
  resource: z.object({ url: z.string() }).passthrough().optional(),
  accepted: requirementsSchema,
  payload: z.record(z.string(), z.unknown()),
  extensions: z.record(z.string(), z.unknown()).optional(),
});

const eip3009Schema = z.object({
  signature: z.string().regex(/^0x[0-9a-fA-F]+$/),
  authorization: z.object({
    from: address,
    to: address,
    value: uintString,
    validAfter: uintString,
    validBefore: uintString,
    nonce: hex32,
  }),
});

/** The EIP-3009 authorization of an exact payment, typed. */
export interface Eip3009Authorization {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
}

/** A decoded payment: the raw payload (forwarded to the facilitator as is) plus its parts. */
export interface DecodedPayment {
  payload: PaymentPayload;
  authorization: Eip3009Authorization;
  signature: Hex;
}

/** Decodes the header; any malformation is a 402 refusal `invalid_payment_header`. */
export function decodePayment(header: string): DecodedPayment {
  let raw: unknown;
  try {
    raw = decodePaymentSignatureHeader(header.trim());
  } catch {
    throw refusePayment(
      'invalid_payment_header',
      'The PAYMENT-SIGNATURE header is not base64-encoded JSON.',
    );
  }
  const parsed = payloadSchema.safeParse(raw);
  if (!parsed.success) {
    throw refusePayment(
      'invalid_payment_header',
      'The PAYMENT-SIGNATURE header is not an x402 payment payload.',
    );
  }
  if (parsed.data.x402Version !== X402_VERSION) {
    throw refusePayment(
      'unsupported_x402_version',
      `The payment uses x402 version ${parsed.data.x402Version}; this gateway speaks version ${X402_VERSION}.`,
    );
  }
  const inner = eip3009Schema.safeParse(parsed.data.payload);
  if (!inner.success) {
    throw refusePayment(
      'unsupported_payload',
      'The payment is not an EIP-3009 transferWithAuthorization, the only method offered.',
    );
  }
  const auth = inner.data.authorization;
  return {
    payload: parsed.data as PaymentPayload,
    signature: inner.data.signature as Hex,
    authorization: {
      from: auth.from as Address,
      to: auth.to as Address,
      value: BigInt(auth.value),
      validAfter: BigInt(auth.validAfter),
      validBefore: BigInt(auth.validBefore),
      nonce: auth.nonce.toLowerCase() as Hex,
    },
  };
}
