/** Shapes shared by the top-up handler, its ledger and the gateway route that calls it. */
import type { Address } from 'viem';
import type { MicroUsd } from '../money/index.js';

/** What the handler needs to know about the calling key (the gateway has authenticated it). */
export interface TopupKey {
  /** `key_<id>` */
  keyId: string;
  /** Buyer identity the key pays from. */
  identity: string;
  /** True when the key has its own identity; keys paying from a workspace wallet cannot top up. */
  ownWallet: boolean;
  /** The wallet the key pays from: the top-up's payee. */
  walletAddress: Address;
  /** Top-ups are off by default and enabled per key. */
  topupEnabled: boolean;
}

/** `--topup-min-usd` … `--topup-max-usd`, inclusive. */
export interface TopupBounds {
  minMicro: MicroUsd;
  maxMicro: MicroUsd;
}

/** A framework-neutral HTTP answer; the gateway route copies it onto its reply. */
export interface TopupReply {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** One call of `POST /v1/key/topup`. */
export interface TopupRequest {
  key: TopupKey;
  /** The parsed JSON body (`{ amount_usd: string }`); validated here. */
  body: unknown;
  /** The `PAYMENT-SIGNATURE` header, when the client sent one. */
  paymentSignature?: string | undefined;
  /** Absolute URL of the route, named in the challenge's `resource`. */
  resourceUrl: string;
}
