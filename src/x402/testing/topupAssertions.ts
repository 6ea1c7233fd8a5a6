/** Assertion helpers shared by the TopupService tests. */
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentRequired } from '@x402/core/types';
import { expect } from 'vitest';
import type { TopupService } from '../TopupService.js';
import type { TopupKey, TopupReply } from '../types.js';

export const TOPUP_URL = 'http://127.0.0.1:8379/v1/key/topup';

export function challengeOf(reply: TopupReply): PaymentRequired {
  const header = reply.headers['PAYMENT-REQUIRED'];
  expect(header, 'PAYMENT-REQUIRED header').toBeTypeOf('string');
  return decodePaymentRequiredHeader(header!);
}

export function codeOf(reply: TopupReply): { code: string; message: string; reason?: string } {
  return (reply.body as { error: { code: string; message: string; reason?: string } }).error;
}

export async function challenge(
  service: TopupService,
  key: TopupKey,
  amount: string,
): Promise<PaymentRequired> {
  const reply = await service.handle({ key, body: { amount_usd: amount }, resourceUrl: TOPUP_URL });
  expect(reply.status).toBe(402);
  return challengeOf(reply);
}

/** Counts facilitator calls while passing them to the real facilitator. */
export function counting(inner: FacilitatorClient) {
  const calls: string[] = [];
  const client: FacilitatorClient = {
    verify: (p, r) => {
      calls.push('verify');
      return inner.verify(p, r);
    },
    settle: (p, r) => {
      calls.push('settle');
      return inner.settle(p, r);
    },
    getSupported: () => inner.getSupported(),
  };
  return { client, calls };
}

/** Polls `check` until true, bounded (no fixed sleeps). */
export async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
