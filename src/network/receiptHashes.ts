/**
 * The hashes a receipt signs (docs/decisions/168-receipts-anyone-can-check.md), each one a third
 * party recomputes with common tools:
 *
 * - request hash: SHA-256 of `<METHOD> <path>\n` followed by the request body, exactly as sent
 *   (`{ printf 'POST /v1/chat/completions\n'; cat body; } | sha256sum`);
 * - response hash: SHA-256 of `<status>\n` followed by the response body, exactly as sent, before
 *   any translation on the buyer (`{ printf '200\n'; cat answer; } | sha256sum`);
 * - the receipt's digest: EIP-712 typed data (domain `SvcReceipt` version 1, no chain) of the
 *   receipt's fields, what the seller's key signs (viem's `hashTypedData`, ethers'
 *   `TypedDataEncoder.hash` or any EIP-712 library gives the same 32 bytes).
 *
 * The byte hashes are node's native SHA-256, fed as the bytes pass (nothing is buffered for
 * them); the digest is written by hand over fixed-size words, as the voucher's is
 * (src/payments/signatures.ts), so a receipt costs six Keccak blocks and no ABI encoder.
 */
import { createHash, type Hash } from 'node:crypto';
import { type Hex, keccak256, stringToHex } from 'viem';
import { keccak, keccakInto } from '../identity/index.js';

const encoder = new TextEncoder();

/** Incremental SHA-256 of a request or response as it passes; `digest` once, at the end. */
export class ExchangeHasher {
  private readonly hash: Hash;

  private constructor(prefix: string) {
    this.hash = createHash('sha256').update(prefix, 'utf8');
  }

  /** Hashes the request `method path` and then its body chunks (`update`). */
  static request(method: string, path: string): ExchangeHasher {
    return new ExchangeHasher(`${method} ${path}\n`);
  }

  /** Hashes the response `status` and then its body chunks (`update`). */
  static response(status: number): ExchangeHasher {
    return new ExchangeHasher(`${status}\n`);
  }

  update(chunk: Uint8Array): this {
    this.hash.update(chunk);
    return this;
  }

  /** `0x` and 64 hex digits. */
  digest(): Hex {
    return `0x${this.hash.digest('hex')}`;
  }
}

/** The request hash of a whole request. */
export function requestHash(method: string, path: string, body: Uint8Array): Hex {
  return ExchangeHasher.request(method, path).update(body).digest();
}

/** The response hash of a whole response. */
export function responseHash(status: number, body: Uint8Array): Hex {
  return ExchangeHasher.response(status).update(body).digest();
}

/** EIP-712 domain of receipts: fixed, bound to no chain or contract (receipts are off chain). */
export const RECEIPT_DOMAIN = { name: 'SvcReceipt', version: '1' } as const;

/** EIP-712 types of a receipt: the fields, in the order they are hashed. */
export const RECEIPT_TYPES = {
  Receipt: [
    { name: 'seller', type: 'address' },
    { name: 'buyer', type: 'address' },
    { name: 'serviceId', type: 'string' },
    { name: 'requestHash', type: 'bytes32' },
    { name: 'responseHash', type: 'bytes32' },
    { name: 'inputTokens', type: 'uint64' },
    { name: 'cachedInputTokens', type: 'uint64' },
    { name: 'outputTokens', type: 'uint64' },
    { name: 'reasoningTokens', type: 'uint64' },
    { name: 'inputMicroUsdPerMillion', type: 'uint256' },
    { name: 'cachedInputMicroUsdPerMillion', type: 'uint256' },
    { name: 'outputMicroUsdPerMillion', type: 'uint256' },
    { name: 'unitMicroUsd', type: 'uint256' },
    { name: 'costMicroUsd', type: 'uint256' },
    { name: 'timeMs', type: 'uint64' },
  ],
} as const;

/** What a receipt signs, as carried in JSON (addresses and hashes `0x` hex, amounts decimal text). */
export interface ReceiptFields {
  /** The seller's address: its peer id with `0x`. */
  seller: Hex;
  /** The buyer's address, as the seller's connection proved it. */
  buyer: Hex;
  serviceId: string;
  requestHash: Hex;
  responseHash: Hex;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /** Of `outputTokens`, hidden reasoning (0 when none was claimed). */
  reasoningTokens: number;
  inputMicroUsdPerMillion: string;
  cachedInputMicroUsdPerMillion: string;
  outputMicroUsdPerMillion: string;
  /** Price of one image or video for unit-billed answers; "0" for token-priced ones. */
  unitMicroUsd: string;
  costMicroUsd: string;
  /** Unix ms when the seller signed. */
  timeMs: number;
}

const typeString = `Receipt(${RECEIPT_TYPES.Receipt.map((field) => `${field.type} ${field.name}`).join(',')})`;
const RECEIPT_TYPEHASH = keccak256(stringToHex(typeString), 'bytes');
const DOMAIN_SEPARATOR = keccak256(
  concatBytes([
    keccak256(stringToHex('EIP712Domain(string name,string version)'), 'bytes'),
    keccak256(stringToHex(RECEIPT_DOMAIN.name), 'bytes'),
    keccak256(stringToHex(RECEIPT_DOMAIN.version), 'bytes'),
  ]),
  'bytes',
);
/** Service ids' hashes: a seller has a handful, a buyer meets a few hundred. */
const serviceIdHashes = new Map<string, Uint8Array>();
const MAX_SERVICE_ID_HASHES = 4096;

function serviceIdHash(serviceId: string): Uint8Array {
  let hash = serviceIdHashes.get(serviceId);
  if (hash === undefined) {
    hash = keccak(encoder.encode(serviceId));
    if (serviceIdHashes.size >= MAX_SERVICE_ID_HASHES) serviceIdHashes.clear();
    serviceIdHashes.set(serviceId, hash);
  }
  return hash;
}

function concatBytes(parts: Uint8Array[]): Uint8Array {
  return Buffer.concat(parts);
}

/**
 * The struct's words, reused by every digest (each is computed in one synchronous call): the
 * type hash stays in word 0, the rest is cleared and written again.
 */
const words = Buffer.alloc((RECEIPT_TYPES.Receipt.length + 1) * 32);
words.set(RECEIPT_TYPEHASH, 0);
/** What the digest hashes: 0x1901, the domain separator, then the struct hash (written in place). */
const signed = Buffer.alloc(2 + 32 + 32);
signed.set([0x19, 0x01], 0);
signed.set(DOMAIN_SEPARATOR, 2);
const structHash = signed.subarray(34);

/** Writes `hex` (a `0x` string of at most 64 digits) right-aligned into the word at `word`. */
function putHex(word: number, hex: string): void {
  const digits = hex.slice(2);
  words.write(digits, word * 32 + 32 - digits.length / 2, 'hex');
}

/** Writes a safe non-negative integer into the word at `word`, with number arithmetic. */
function putCount(word: number, value: number): void {
  words.writeUInt32BE(Math.floor(value / 2 ** 32), word * 32 + 24);
  words.writeUInt32BE(value >>> 0, word * 32 + 28);
}

/** Writes a decimal amount (canonical text, at most 30 digits) into the word at `word`. */
function putAmount(word: number, value: string): void {
  // Up to 15 digits is a safe integer: no BigInt. Longer ones (never a real price) take BigInt.
  if (value.length <= 15) {
    putCount(word, Number(value));
    return;
  }
  let rest = BigInt(value);
  for (let offset = word * 32 + 31; rest > 0n; offset--) {
    words[offset] = Number(rest & 0xffn);
    rest >>= 8n;
  }
}

/**
 * The EIP-712 digest of `fields` (equal to viem's `hashTypedData` with RECEIPT_DOMAIN and
 * RECEIPT_TYPES; a test holds it to that), 32 bytes. The fields must already be in their bounds
 * (`receiptSchema`): 40-digit addresses, 64-digit hashes, safe integer counts, canonical amounts.
 */
export function receiptDigestBytes(fields: ReceiptFields): Uint8Array {
  words.fill(0, 32);
  putHex(1, fields.seller);
  putHex(2, fields.buyer);
  words.set(serviceIdHash(fields.serviceId), 3 * 32);
  putHex(4, fields.requestHash);
  putHex(5, fields.responseHash);
  putCount(6, fields.inputTokens);
  putCount(7, fields.cachedInputTokens);
  putCount(8, fields.outputTokens);
  putCount(9, fields.reasoningTokens);
  putAmount(10, fields.inputMicroUsdPerMillion);
  putAmount(11, fields.cachedInputMicroUsdPerMillion);
  putAmount(12, fields.outputMicroUsdPerMillion);
  putAmount(13, fields.unitMicroUsd);
  putAmount(14, fields.costMicroUsd);
  putCount(15, fields.timeMs);
  keccakInto(words, structHash);
  return keccak(signed);
}

/** `receiptDigestBytes` as `0x` hex. */
export function receiptDigest(fields: ReceiptFields): Hex {
  const digest = receiptDigestBytes(fields);
  return `0x${Buffer.from(digest.buffer, digest.byteOffset, 32).toString('hex')}`;
}
