/** What the console needs from the gateway: its store, clock, sign-in throttle and identities. */

import type { Pool } from 'undici';
import type { IdentityStore } from '../../../identity/index.js';
import type { Logger } from '../../../log/index.js';
import type { AuthThrottle } from '../../server/authThrottle.js';
import type { GatewayStore } from '../../store/types.js';

export interface ConsoleDeps {
  store: GatewayStore;
  now: () => number;
  /** Shared with the API: failed key sign-ins count as failed authentications (429 after). */
  throttle: AuthThrottle;
  identities: IdentityStore;
  logger: Logger;
  /** The buyer's connection pool (network and channel pages ask its control plane). */
  buyer: Pool;
  /** Wallet address of an identity. */
  buyerAddress: (identity: string) => string;
}
