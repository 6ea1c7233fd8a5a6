import { createHash } from 'node:crypto';
import { type Hex, hashTypedData, recoverTypedDataAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { mirroredSignature } from '../identity/testing.js';
import { FrameType } from './frames.js';
import {
  ExchangeHasher,
  RECEIPT_DOMAIN,
  RECEIPT_TYPES,
  receiptDigest,
  requestHash,
  responseHash,
} from './receiptHashes.js';
import {
  MAX_RECEIPT_SERVICE_ID,
  type Receipt,
  type ReceiptExpectations,
  type ReceiptRefusal,
  receiptFields,
  receiptIssuer,
  verifyReceipt,
} from './receipts.js';
import { frameLimit, MAX_TRAILER_BYTES, trailerSchema } from './requestWire.js';

const text = new TextEncoder();
const sellerKey = generatePrivateKey();
const seller = privateKeyToAccount(sellerKey).address.toLowerCase().slice(2);
const buyer = privateKeyToAccount(generatePrivateKey()).address.toLowerCase().slice(2);
const request = {
  method: 'POST',
  path: '/v1/chat/completions',
  body: text.encode('{"model":"gpt-paid","messages":[{"role":"user","content":"hi"}]}'),
};
const response = {
  status: 200,
  body: text.encode('{"choices":[{"message":{"content":"hello"}}]}'),
};
const claims = {
  usage: { inputTokens: 14, cachedInputTokens: 4, outputTokens: 309, reasoningTokens: 300 },
  costMicroUsd: '6233',
};
const NOW = 1_760_000_000_000;

function signed(issue = receiptIssuer(sellerKey)): Receipt {
  return issue(
    receiptFields({
      seller,
      buyer,
      requestHash: requestHash(request.method, request.path, request.body),
      responseHash: responseHash(response.status, response.body),
      terms: {
        serviceId: 'gpt-paid',
        price: {
          inputMicroPerMillion: 3_000_000n,
          outputMicroPerMillion: 20_000_000n,
          cachedInputMicroPerMillion: 1_500_000n,
        },
      },
      claims,
      timeMs: NOW,
    }),
  );
}

/** Everything the buyer knows about the answer. */
const everything: ReceiptExpectations = {
  seller,
  buyer,
  serviceId: 'gpt-paid',
  request,
  response,
  claims,
  timeMs: { from: NOW - 1000, to: NOW + 1000 },
};

describe('receipts (decision 168)', () => {
  it('round trip: a signed receipt verifies against every byte and claim the buyer holds, and through JSON', () => {
    const receipt = signed();
    expect(verifyReceipt(receipt, everything)).toEqual({ ok: true, receipt });
    const wire = JSON.parse(JSON.stringify(receipt)) as unknown;
    expect(verifyReceipt(wire, everything).ok).toBe(true);
    expect(verifyReceipt(wire).ok).toBe(true);
    expect(trailerSchema.parse({ ...claims, receipt: wire })).toEqual({ ...claims, receipt });
    expect(receipt).toMatchObject({
      seller: `0x${seller}`,
      buyer: `0x${buyer}`,
      inputMicroUsdPerMillion: '3000000',
      cachedInputMicroUsdPerMillion: '1500000',
      outputMicroUsdPerMillion: '20000000',
      unitMicroUsd: '0',
      costMicroUsd: '6233',
      reasoningTokens: 300,
    });
  });

  it('is recomputed by common tools: sha256 of the framed bytes, and EIP-712 as viem does it', async () => {
    const receipt = signed();
    const sha256 = (...parts: Uint8Array[]) =>
      `0x${createHash('sha256').update(Buffer.concat(parts)).digest('hex')}`;
    expect(receipt.requestHash).toBe(
      sha256(text.encode('POST /v1/chat/completions\n'), request.body),
    );
    expect(receipt.responseHash).toBe(sha256(text.encode('200\n'), response.body));
    const { signature, ...fields } = receipt;
    const message = {
      ...fields,
      inputMicroUsdPerMillion: BigInt(fields.inputMicroUsdPerMillion),
      cachedInputMicroUsdPerMillion: BigInt(fields.cachedInputMicroUsdPerMillion),
      outputMicroUsdPerMillion: BigInt(fields.outputMicroUsdPerMillion),
      unitMicroUsd: BigInt(fields.unitMicroUsd),
      costMicroUsd: BigInt(fields.costMicroUsd),
      inputTokens: BigInt(fields.inputTokens),
      cachedInputTokens: BigInt(fields.cachedInputTokens),
      outputTokens: BigInt(fields.outputTokens),
      reasoningTokens: BigInt(fields.reasoningTokens),
      timeMs: BigInt(fields.timeMs),
    };
    const typed = {
      domain: RECEIPT_DOMAIN,
      types: RECEIPT_TYPES,
      primaryType: 'Receipt',
      message,
    } as const;
    expect(receiptDigest(fields)).toBe(hashTypedData(typed));
    expect((await recoverTypedDataAddress({ ...typed, signature })).toLowerCase()).toBe(
      `0x${seller}`,
    );
  });

  it('hashes the same bytes the same way whole or in chunks', () => {
    const chunked = ExchangeHasher.response(200);
    for (let i = 0; i < response.body.length; i += 7) chunked.update(response.body.slice(i, i + 7));
    expect(chunked.digest()).toBe(responseHash(200, response.body));
    expect(responseHash(201, response.body)).not.toBe(responseHash(200, response.body));
    expect(requestHash('POST', '/v1/responses', request.body)).not.toBe(
      requestHash('POST', request.path, request.body),
    );
  });

  it('the digest matches viem for extreme values (empty and longest service id, largest counts and amounts)', () => {
    for (const serviceId of ['', 'é'.repeat(MAX_RECEIPT_SERVICE_ID)]) {
      const fields = {
        ...signed(),
        serviceId,
        inputTokens: Number.MAX_SAFE_INTEGER,
        timeMs: Number.MAX_SAFE_INTEGER,
        costMicroUsd: '9'.repeat(30),
        unitMicroUsd: '1',
        // Either side of the largest amount written as a number (15 digits) and 2⁵³.
        inputMicroUsdPerMillion: '9'.repeat(15),
        cachedInputMicroUsdPerMillion: '9'.repeat(16),
        outputMicroUsdPerMillion: '9007199254740993',
      };
      const { signature: _unused, ...unsigned } = fields;
      const message = Object.fromEntries(
        Object.entries(unsigned).map(([key, value]) => [
          key,
          typeof value === 'number' || /^\d+$/.test(value) ? BigInt(value) : value,
        ]),
      );
      expect(receiptDigest(unsigned)).toBe(
        hashTypedData({
          domain: RECEIPT_DOMAIN,
          types: RECEIPT_TYPES,
          primaryType: 'Receipt',
          message: message as never,
        }),
      );
    }
  });

  /** Each field changed after signing, and the reason the buyer refuses it for. */
  const tampered: Array<[keyof Receipt, unknown, ReceiptRefusal]> = [
    ['seller', `0x${'1'.repeat(40)}`, 'wrong_seller'],
    ['buyer', `0x${'2'.repeat(40)}`, 'wrong_buyer'],
    ['serviceId', 'gpt-other', 'wrong_service'],
    ['requestHash', `0x${'3'.repeat(64)}`, 'request_mismatch'],
    ['responseHash', `0x${'4'.repeat(64)}`, 'response_mismatch'],
    ['inputTokens', 15, 'claims_mismatch'],
    ['cachedInputTokens', 0, 'claims_mismatch'],
    ['outputTokens', 310, 'claims_mismatch'],
    ['reasoningTokens', 0, 'claims_mismatch'],
    ['costMicroUsd', '6234', 'claims_mismatch'],
    ['timeMs', NOW + 60_000, 'time_out_of_range'],
    ['timeMs', NOW + 1, 'bad_signature'],
    ['inputMicroUsdPerMillion', '1', 'bad_signature'],
    ['cachedInputMicroUsdPerMillion', '1', 'bad_signature'],
    ['outputMicroUsdPerMillion', '1', 'bad_signature'],
    ['unitMicroUsd', '5', 'bad_signature'],
    ['signature', mirroredSignature(signed().signature), 'bad_signature'],
    ['signature', `0x${'0'.repeat(130)}`, 'bad_signature'],
    ['signature', '0x1234', 'malformed'],
  ];

  it.each(tampered)('refuses a receipt whose %s was changed (%s): %s', (field, value, reason) => {
    const receipt = { ...signed(), [field]: value };
    const check = verifyReceipt(receipt, everything);
    expect(check.ok).toBe(false);
    if (!check.ok) {
      expect(check.reason).toBe(reason);
      expect(check.message).not.toBe('');
    }
    // Knowing nothing but the receipt, a third party refuses it too (its signature no longer holds).
    expect(verifyReceipt(receipt).ok).toBe(false);
  });

  it('refuses a receipt signed by another key, whether it names the seller or the other key', () => {
    const otherKey = generatePrivateKey();
    const other = privateKeyToAccount(otherKey).address.toLowerCase().slice(2);
    const claimsSeller = signed((fields) => receiptIssuer(otherKey)(fields));
    expect(verifyReceipt(claimsSeller, everything)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
    const namesOther = signed((fields) =>
      receiptIssuer(otherKey)({ ...fields, seller: `0x${other}` }),
    );
    expect(verifyReceipt(namesOther).ok).toBe(true);
    expect(verifyReceipt(namesOther, everything)).toMatchObject({
      ok: false,
      reason: 'wrong_seller',
    });
  });

  it('refuses a response altered after it was hashed', () => {
    const receipt = signed();
    const altered = Buffer.from(response.body);
    altered[altered.length - 3] = 'x'.charCodeAt(0);
    expect(
      verifyReceipt(receipt, { ...everything, response: { status: 200, body: altered } }),
    ).toMatchObject({ ok: false, reason: 'response_mismatch' });
    expect(
      verifyReceipt(receipt, { ...everything, response: { ...response, status: 203 } }),
    ).toMatchObject({ ok: false, reason: 'response_mismatch' });
  });

  it('compares claims as the trailer states them: absent usage and cost are zero', () => {
    const bare = receiptIssuer(sellerKey)(
      receiptFields({
        seller,
        buyer,
        requestHash: requestHash('POST', '/x', new Uint8Array()),
        responseHash: responseHash(404, new Uint8Array()),
        terms: undefined,
        claims: {},
        timeMs: NOW,
      }),
    );
    expect(bare).toMatchObject({ serviceId: '', inputTokens: 0, costMicroUsd: '0' });
    expect(verifyReceipt(bare, { claims: {} }).ok).toBe(true);
    expect(verifyReceipt(bare, { claims: { costMicroUsd: '000' } }).ok).toBe(true);
    expect(verifyReceipt(bare, { claims: { costMicroUsd: '1' } })).toMatchObject({
      reason: 'claims_mismatch',
    });
  });

  it('refuses anything that is not a receipt, and says when there is none', () => {
    const receipt = signed();
    const { timeMs: _dropped, ...missingField } = receipt;
    const cases: unknown[] = [
      'receipt',
      42,
      [],
      missingField,
      { ...receipt, extra: 1 },
      { ...receipt, seller: receipt.seller.toUpperCase() },
      { ...receipt, costMicroUsd: '0100' },
      { ...receipt, inputTokens: -1 },
      { ...receipt, inputTokens: 1.5 },
      { ...receipt, serviceId: 'x'.repeat(MAX_RECEIPT_SERVICE_ID + 1) },
      { ...receipt, serviceId: 'gpt\u001b[2J' },
    ];
    for (const value of cases) expect(verifyReceipt(value)).toMatchObject({ reason: 'malformed' });
    expect(verifyReceipt(undefined)).toMatchObject({ ok: false, reason: 'missing' });
    expect(verifyReceipt(null)).toMatchObject({ ok: false, reason: 'missing' });
  });
});

describe('the trailer with a receipt is bounded', () => {
  it('the longest valid trailer fits the trailer frame limit, which is well under a head', () => {
    const largest = {
      usage: {
        inputTokens: Number.MAX_SAFE_INTEGER,
        cachedInputTokens: Number.MAX_SAFE_INTEGER,
        outputTokens: Number.MAX_SAFE_INTEGER,
        reasoningTokens: Number.MAX_SAFE_INTEGER,
      },
      costMicroUsd: '9'.repeat(30),
      // Control characters are escaped in six bytes each.
      error: '\u0001'.repeat(4096),
      receipt: {
        ...signed(),
        serviceId: '\u00a1'.repeat(MAX_RECEIPT_SERVICE_ID),
        inputMicroUsdPerMillion: '9'.repeat(30),
        cachedInputMicroUsdPerMillion: '9'.repeat(30),
        outputMicroUsdPerMillion: '9'.repeat(30),
        unitMicroUsd: '9'.repeat(30),
        costMicroUsd: '9'.repeat(30),
        inputTokens: Number.MAX_SAFE_INTEGER,
        timeMs: Number.MAX_SAFE_INTEGER,
      },
    };
    expect(trailerSchema.safeParse(largest).success).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(largest))).toBeLessThan(MAX_TRAILER_BYTES);
    expect(frameLimit(FrameType.trailer)).toBe(MAX_TRAILER_BYTES);
    expect(MAX_TRAILER_BYTES).toBeLessThan(frameLimit(FrameType.head));
  });

  it('refuses a trailer whose receipt is out of bounds or carries more', () => {
    const receipt = signed();
    const refused = [
      { receipt: { ...receipt, serviceId: 'x'.repeat(MAX_RECEIPT_SERVICE_ID + 1) } },
      { receipt: { ...receipt, requestHash: `${receipt.requestHash}00` as Hex } },
      { receipt: { ...receipt, costMicroUsd: '1'.repeat(31) } },
      { receipt: { ...receipt, note: 'more' } },
      { receipt: 'signed' },
    ];
    for (const trailer of refused) expect(trailerSchema.safeParse(trailer).success).toBe(false);
  });
});
