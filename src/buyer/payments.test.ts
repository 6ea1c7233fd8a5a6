import { describe, expect, expectTypeOf, it } from 'vitest';
import type { BuyerPaymentService as ChannelPayments } from '../payments/index.js';
import { type BuyerPayments, NO_PAYMENTS } from './payments.js';

describe('payments seam', () => {
  it('is satisfied by the payments capability', () => {
    expectTypeOf<ChannelPayments>().toMatchTypeOf<BuyerPayments>();
  });

  it('refuses paid offers by default with insufficient_deposits', async () => {
    await expect(
      NO_PAYMENTS.prepare({
        identity: 'default',
        peerId: 'ab'.repeat(20),
        sellerAddress: `0x${'ab'.repeat(20)}`,
        price: { inputMicroPerMillion: 1n, outputMicroPerMillion: 1n },
        maxCostMicro: 10n,
        requestId: 'req_1',
      }),
    ).rejects.toMatchObject({ code: 'insufficient_deposits', status: 402 });
  });
});
