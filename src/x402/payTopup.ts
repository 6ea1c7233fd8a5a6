/**
 * Pays a key top-up the way any x402 client would: `@x402/fetch`'s wrapFetchWithPayment with the
 * exact EVM scheme. Spend controls allow exactly the asset and network the gateway asked for, and
 * at most the amount the user typed, so a gateway cannot make this command pay more.
 */
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { LocalAccount } from 'viem';
import { SvcError } from '../errors/index.js';
import { formatUsd, parseUsd } from '../money/index.js';
import { PAYMENT_REQUIRED_HEADER, PAYMENT_RESPONSE_HEADER } from './constants.js';

export interface PayTopupOptions {
  /** Gateway base URL, e.g. http://127.0.0.1:8379 */
  gatewayUrl: string;
  /** The key to top up (`svc_...`), sent as bearer. */
  apiKey: string;
  amountUsd: string;
  /** The wallet that pays (signs the EIP-3009 authorization; needs USDC, no gas). */
  account: LocalAccount;
  fetch?: typeof globalThis.fetch;
}

export interface PayTopupResult {
  status: number;
  body: unknown;
  challenge: PaymentRequired;
  /** The decoded PAYMENT-RESPONSE, when the gateway sent one. */
  settle?: SettleResponse;
}

/** Asks for the challenge, then pays it with the official client; throws on refusal. */
export async function payTopup(options: PayTopupOptions): Promise<PayTopupResult> {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const amountMicro = parseUsd(options.amountUsd);
  const url = `${options.gatewayUrl.replace(/\/+$/, '')}/v1/key/topup`;
  const init: RequestInit = {
    method: 'POST',
    headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ amount_usd: options.amountUsd }),
  };

  const probe = await fetchImpl(url, init);
  const header = probe.headers.get(PAYMENT_REQUIRED_HEADER);
  if (probe.status !== 402 || !header) {
    throw new SvcError('invalid_request', {
      message: `The gateway answered ${probe.status} instead of a payment challenge: ${await errorText(probe)}`,
      status: probe.status,
    });
  }
  const challenge = decodePaymentRequiredHeader(header);
  const offer = challenge.accepts[0];
  if (!offer)
    throw new SvcError('invalid_request', { message: 'The gateway offered no way to pay.' });
  if (BigInt(offer.amount) !== amountMicro) {
    throw new SvcError('invalid_request', {
      message: `The gateway asks for ${offer.amount} atomic units, not the ${formatUsd(amountMicro)} USD requested; not paying.`,
    });
  }

  const client = new x402Client()
    .register(offer.network as `${string}:${string}`, new ExactEvmScheme(options.account))
    .setSpendControls({
      maxAmountPerPayment: `$${formatUsd(amountMicro)}`,
      allowedAssets: [
        {
          network: offer.network as `${string}:${string}`,
          asset: offer.asset,
          maxAmountPerPayment: amountMicro.toString(),
        },
      ],
    });
  const paidFetch = wrapFetchWithPayment(fetchImpl, client);
  const response = await paidFetch(url, init);
  const settleHeader = response.headers.get(PAYMENT_RESPONSE_HEADER);
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // keep the text
  }
  return {
    status: response.status,
    body,
    challenge,
    ...(settleHeader ? { settle: decodePaymentResponseHeader(settleHeader) } : {}),
  };
}

async function errorText(response: Response): Promise<string> {
  const text = await response.text();
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string } };
    return parsed.error?.message ?? text.slice(0, 300);
  } catch {
    return text.slice(0, 300);
  }
}
