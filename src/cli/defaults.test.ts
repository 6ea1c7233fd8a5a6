import { describe, expect, it } from 'vitest';
import { DEFAULT_ETH_USD } from '../chain/index.js';
import { DEFAULT_DEV_PORTS } from '../devnet/index.js';
import { LOGIN_LINK_MS, PERIODS } from '../gateway/index.js';
import { DEFAULT_IDENTITY } from '../identity/index.js';
import { INDEXER_PORT as INDEXER_DEFAULT_PORT } from '../indexer/index.js';
import { BROWSE_SORTS } from '../network/index.js';
import {
  DEFAULT_TUNNEL_BODY_LIMIT_BYTES,
  DEFAULT_TUNNEL_STREAMS_PER_GATEWAY,
} from '../tunnel/index.js';
import { LOCAL_FACILITATOR_PORT } from '../x402/index.js';
import {
  BROWSE_ORDERS,
  DEFAULT_IDENTITY_NAME,
  DEPLOY_ETH_USD,
  FACILITATOR_PORT,
  INDEXER_PORT,
  LIMIT_PERIODS,
  LOGIN_LINK_MINUTES,
  TUNNEL_BODY_LIMIT_BYTES,
  TUNNEL_STREAMS_PER_GATEWAY,
  UP_PORTS,
} from './defaults.js';

describe('the values the help shows', () => {
  it('are the ones the folders that own them use', () => {
    expect(LIMIT_PERIODS).toEqual(PERIODS);
    expect(LOGIN_LINK_MINUTES * 60_000).toBe(LOGIN_LINK_MS);
    expect(DEPLOY_ETH_USD).toBe(DEFAULT_ETH_USD);
    expect(INDEXER_PORT).toBe(INDEXER_DEFAULT_PORT);
    expect(UP_PORTS).toEqual(DEFAULT_DEV_PORTS);
    expect(TUNNEL_BODY_LIMIT_BYTES).toBe(DEFAULT_TUNNEL_BODY_LIMIT_BYTES);
    expect(TUNNEL_STREAMS_PER_GATEWAY).toBe(DEFAULT_TUNNEL_STREAMS_PER_GATEWAY);
    expect(DEFAULT_IDENTITY_NAME).toBe(DEFAULT_IDENTITY);
    expect(FACILITATOR_PORT).toBe(LOCAL_FACILITATOR_PORT);
    expect(BROWSE_ORDERS).toEqual(BROWSE_SORTS);
  });
});
