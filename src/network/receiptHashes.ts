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
import { keccak, keccakHex } from '../identity/index.js';

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
const WORDS = RECEIPT_TYPES.Receipt.length + 1;
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

const PREFIX_1901 = Uint8Array.of(0x19, 0x01);

function concatBytes(parts: Uint8Array[]): Uint8Array {
  return Buffer.concat(parts);
}

/** Writes `hex` (a `0x` string of at most 64 digits) right-aligned into the word at `word`. */
function putHex(out: Buffer, word: number, hex: string): void {
  const digits = hex.slice(2);
  out.write(digits, word * 32 + 32 - digits.length / 2, 'hex');
}

/** Writes a non-negative integer (a safe number or decimal text) into the word at `word`. */
function putUint(out: Buffer, word: number, value: number | string): void {
  let rest = BigInt(value);
  for (let offset = word * 32 + 31; rest > 0n; offset--) {
    out[offset] = Number(rest & 0xffn);
    rest >>= 8n;
  }
}

/** Fast path for counts and times: safe integers written with number arithmetic. */
function putCount(out: Buffer, word: number, value: number): void {
  const high = Math.floor(value / 2 ** 32);
  out.writeUInt32BE(high, word * 32 + 24);
  out.writeUInt32BE(value >>> 0, word * 32 + 28);
}

/**
 * The EIP-712 digest of `fields` (equal to viem's `hashTypedData` with RECEIPT_DOMAIN and
 * RECEIPT_TYPES; a test holds it to that). The fields must already be in their bounds
 * (`receiptSchema`): 40-digit addresses, 64-digit hashes, safe integer counts.
 */
export function receiptDigest(fields: ReceiptFields): Hex {
  const words = Buffer.alloc(WORDS * 32);
  words.set(RECEIPT_TYPEHASH, 0);
  putHex(words, 1, fields.seller);
  putHex(words, 2, fields.buyer);
  words.set(serviceIdHash(fields.serviceId), 3 * 32);
  putHex(words, 4, fields.requestHash);
  putHex(words, 5, fields.responseHash);
  putCount(words, 6, fields.inputTokens);
  putCount(words, 7, fields.cachedInputTokens);
  putCount(words, 8, fields.outputTokens);
  putCount(words, 9, fields.reasoningTokens);
  putUint(words, 10, fields.inputMicroUsdPerMillion);
  putUint(words, 11, fields.cachedInputMicroUsdPerMillion);
  putUint(words, 12, fields.outputMicroUsdPerMillion);
  putUint(words, 13, fields.unitMicroUsd);
  putUint(words, 14, fields.costMicroUsd);
  putCount(words, 15, fields.timeMs);
  return keccakHex(concatBytes([PREFIX_1901, DOMAIN_SEPARATOR, keccak(words)]));
}
