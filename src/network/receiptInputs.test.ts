/**
 * The buyer's receipt inputs hash an answer only when asked (src/network/receiptInputs.ts): the
 * hashes are those of the bytes as they arrived, whether the answer was held unhashed or passed
 * the bound and was hashed as it came.
 */
import { describe, expect, it } from 'vitest';
import { requestHash, responseHash } from './receiptHashes.js';
import { ReceiptInputs, UNHASHED_RESPONSE_BYTES } from './receiptInputs.js';

const BUYER = 'ab'.repeat(20);
const request = {
  method: 'POST',
  path: '/v1/chat/completions',
  headers: {},
  body: new TextEncoder().encode('{"model":"m"}'),
};

function chunks(sizes: number[]): Uint8Array[] {
  let next = 0;
  return sizes.map((size) => Uint8Array.from({ length: size }, () => next++ % 251));
}

describe('ReceiptInputs', () => {
  it.each([
    ['one small chunk', [1024]],
    ['many chunks under the bound', [10, 2000, 1, 30_000]],
    ['chunks past the bound', [40_000, 30_000, 20_000, 5]],
    ['one chunk over the bound, then more', [UNHASHED_RESPONSE_BYTES + 1, 7, 9]],
  ])('%s: the hashes are those of the bytes received', (_name, sizes) => {
    const inputs = new ReceiptInputs(BUYER, request, { status: 201, headers: {} });
    const body = chunks(sizes);
    for (const chunk of body) inputs.chunk(chunk);
    expect(inputs.exchange()).toBeUndefined();
    inputs.end();
    const exchange = inputs.exchange();
    expect(exchange).toEqual({
      buyerPeerId: BUYER,
      requestHash: requestHash('POST', '/v1/chat/completions', request.body),
      responseHash: responseHash(201, Buffer.concat(body)),
    });
    // Asked again (a paid answer's check, then its record): the same, not hashed twice.
    expect(inputs.exchange()).toBe(exchange);
  });

  it('an empty answer hashes its status alone; a kept body is copied whole', () => {
    const empty = new ReceiptInputs(BUYER, request, { status: 204, headers: {} });
    empty.end();
    expect(empty.exchange()?.responseHash).toBe(responseHash(204, new Uint8Array(0)));
    const kept = new ReceiptInputs(
      BUYER,
      { ...request, keepResponseBytes: 100 },
      { status: 200, headers: {} },
    );
    const body = chunks([30, 40]);
    for (const chunk of body) kept.chunk(chunk);
    kept.end();
    expect(kept.exchange()).toMatchObject({
      responseHash: responseHash(200, Buffer.concat(body)),
      responseBody: Buffer.concat(body),
    });
  });
});
