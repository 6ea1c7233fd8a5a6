/**
 * The gateway: API keys, workspaces, members, budgets, routing policies and request
 * logs in front of the buyer, which it reaches over HTTP only.
 */
export { type CreatedKey, type CreateKeyInput, createKey, rotateKey } from './admin/createKey.js';
export { logRowJson, logsToCsv } from './admin/logCsv.js';
export { type AddMemberInput, addMember } from './admin/members.js';
export {
  parseCount,
  parseExpiresInDays,
  parseExpiry,
  parseLimitUsd,
  parseModelList,
} from './admin/parseInput.js';
export {
  createNamedWorkspace,
  DEFAULT_WORKSPACE,
  defaultWorkspace,
  newId,
  requireWorkspace,
} from './admin/workspaces.js';
export { effectiveKeyLimits } from './budget/effectiveLimits.js';
export { periodResetsAt, periodStart } from './budget/periods.js';
export { createLoginLink, LOGIN_LINK_MS } from './console/index.js';
export { keyState } from './keys/keyState.js';
export { encodeBuyerPolicy, mergePolicies, narrow } from './policy/mergePolicies.js';
export { type RoutingPolicy, routingPolicySchema } from './policy/types.js';

import type { RunningGateway, StartGatewayOptions } from './server/startGateway.js';

export { controlSecretPath, ensureControlSecret } from './server/controlSecret.js';
export {
  type ClientOrigin,
  ForwardedTrust,
  TUNNEL_TOKEN_HEADER,
} from './server/forwarded.js';
export { keyView } from './server/keyView.js';
export type { RunningGateway, StartGatewayOptions } from './server/startGateway.js';
export { type CreateStoreOptions, createStore } from './store/createStore.js';
// The SQL seam and its two drivers, for other long-running services that keep state the same way.
export { PostgresDb } from './store/postgres/PostgresDb.js';
export {
  bigintOf,
  numberOf,
  type SqlDb,
  type SqlExecutor,
  type SqlParam,
  type SqlRow,
  textOf,
} from './store/sql/SqlDb.js';
export { SqliteDb } from './store/sqlite/SqliteDb.js';
export type * from './store/types.js';
export { LEVELS, NO_LIMITS, PERIODS } from './store/types.js';

/**
 * Starts a gateway. Its server, and the network, routing and x402 code it brings, load on the
 * first call: a command that only reads or writes the store (`svc gateway key list`) stays light
 * (docs/decisions/215-commands-load-their-code-when-they-run.md).
 */
export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  const { startGateway: start } = await import('./server/startGateway.js');
  return start(options);
}
