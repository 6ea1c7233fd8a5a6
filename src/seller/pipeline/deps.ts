/** What the seller's request pipeline is given: its providers with their live load, payments, a logger. */
import type { ProviderConfig } from '../../config/index.js';
import type { PeerId } from '../../identity/index.js';
import type { Logger } from '../../log/index.js';
import type { SellerPayments } from '../payments.js';
import type { ProviderKind } from '../providers.js';

/** A configured provider with its key resolved and its live load. */
export interface RuntimeProvider {
  config: ProviderConfig;
  kind: ProviderKind;
  name: string;
  baseUrl: string | undefined;
  apiKey: string | undefined;
  /** Shared with in-flight requests, so a config update keeps the count. */
  load: { active: number };
}

export interface HandlerDeps {
  sellerPeerId: PeerId;
  providers: () => RuntimeProvider[];
  payments: SellerPayments;
  /** Called whenever a provider's load changes. */
  onLoadChange: () => void;
  logger: Logger;
}
