/** What the request handlers share: store, buyer connection pool, config, clock, logger. */
import type { Pool } from 'undici';
import type { GatewayConfig } from '../../config/index.js';
import type { Logger } from '../../log/index.js';
import type { MicroUsd } from '../../money/index.js';
import type { InProcessBuyer } from '../../protocol/index.js';
import type { TopupService } from '../../x402/index.js';
import type { GatewayStore } from '../store/types.js';
import type { AuthThrottle } from './authThrottle.js';
import type { ForwardedTrust } from './forwarded.js';
import type { LogWriter } from './logWriter.js';
import type { PriceBook } from './priceBook.js';

export interface GatewayDeps {
  store: GatewayStore;
  /** The buyer's HTTP listener: the whole API in the remote mode; catalog, media, journal always. */
  buyer: Pool;
  /** The buyer in this process, serving the text routes without an HTTP hop; absent = remote. */
  inProcess?: InProcessBuyer | undefined;
  config: GatewayConfig;
  controlSecret: string;
  maxRequestCostMicro: MicroUsd;
  /** Priced offers per model in routing order, for reservations sized to the request. */
  prices: PriceBook;
  now: () => number;
  logger: Logger;
  throttle: AuthThrottle;
  /** Whose X-Forwarded-* headers are believed (`gateway.trustedProxies`, the tunnel). */
  forwarded: ForwardedTrust;
  logs: LogWriter;
  /** Wallet address of an identity (for `GET /v1/key`). */
  buyerAddress: (identity: string) => string;
  /** x402 key top-ups; undefined = not configured (the route answers 501). */
  topups?: TopupService | undefined;
}
