/**
 * Values of other folders that the command tree shows in its help (flag defaults, flag names,
 * durations). They are copied here so that building the tree, and so `--help`, loads none of those
 * folders: a command loads them when it runs
 * (docs/decisions/215-commands-load-their-code-when-they-run.md). `defaults.test` checks each copy
 * against its folder, so none can drift.
 */
import type { DevPorts } from '../devnet/index.js';
import type { Period } from '../gateway/index.js';
import type { BrowseSort } from '../network/index.js';

/** The gateway's budget periods, in its order (its PERIODS). */
export const LIMIT_PERIODS = [
  'daily',
  'weekly',
  'monthly',
  'total',
] as const satisfies readonly Period[];

/** How long a console sign-in link lasts, in minutes (the gateway's LOGIN_LINK_MS). */
export const LOGIN_LINK_MINUTES = 5;

/** The ETH price `svc chain deploy` shows costs at (the chain folder's DEFAULT_ETH_USD). */
export const DEPLOY_ETH_USD = '3000';

/** The indexer's port (the indexer folder's INDEXER_PORT). */
export const INDEXER_PORT = 8380;

/** The ports `svc up` uses (the devnet folder's DEFAULT_DEV_PORTS). */
export const UP_PORTS: Required<DevPorts> = {
  chain: 8545,
  bootstrap: 8378,
  buyer: 8377,
  gateway: 8379,
  facilitator: 8402,
  indexer: 8380,
};

/** A tunnel relay's request body limit and open requests per gateway (the tunnel folder's). */
export const TUNNEL_BODY_LIMIT_BYTES = 32 * 1024 * 1024;
export const TUNNEL_STREAMS_PER_GATEWAY = 64;

/** The identity commands use when none is named (the identity folder's DEFAULT_IDENTITY). */
export const DEFAULT_IDENTITY_NAME = 'default';

/** The local x402 facilitator's port (the x402 folder's LOCAL_FACILITATOR_PORT). */
export const FACILITATOR_PORT = 8402;

/** The orders `svc network browse --sort` takes (the network folder's BROWSE_SORTS). */
export const BROWSE_ORDERS = [
  'score',
  'volume',
  'sessions',
  'price',
  'recent',
] as const satisfies readonly BrowseSort[];
