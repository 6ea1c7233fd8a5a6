/** What the store contract suites share: a fixed clock, a usage, unique names and a workspace with a key. */
import { type GatewayStore, type NewKey, NO_LIMITS } from '../store/types.js';

export const T0 = Date.UTC(2026, 2, 18, 12, 0, 0); // Wednesday 18 March 2026, 12:00 UTC
export const USAGE = { inputTokens: 10, cachedInputTokens: 2, outputTokens: 5 };
let counter = 0;
export const unique = (prefix: string) =>
  `${prefix}_${Date.now().toString(36)}${(counter++).toString(36)}`;

/** A workspace, a member in it and a key of the member (also used by consoleTablesContract). */
export async function fixture(store: GatewayStore, limits: Partial<NewKey['adminLimits']> = {}) {
  const identity = unique('id');
  const workspace = await store.createWorkspace({
    id: unique('ws'),
    name: unique('team'),
    identity,
    createdAt: T0,
  });
  const member = await store.createMember({
    id: unique('mem'),
    name: unique('ann'),
    orgRole: 'none',
    keyQuota: null,
    createdAt: T0,
  });
  await store.addMembership(member.id, workspace.id, 'member');
  const key = await store.createKey({
    id: unique('key'),
    label: 'ci',
    secretHash: unique('hash'),
    workspaceId: workspace.id,
    memberId: member.id,
    identity,
    ownIdentity: false,
    allowedModels: null,
    topupEnabled: false,
    createdAt: T0,
    expiresAt: null,
    adminLimits: { ...NO_LIMITS, ...limits },
  });
  return { workspace, member, key };
}

export async function spend(
  store: GatewayStore,
  keyId: string,
  max: bigint,
  cost: bigint,
  now = T0,
) {
  const result = await store.reserve({
    reservationId: unique('res'),
    keyId,
    maxAmountMicro: max,
    now,
  });
  if (!result.ok) return result;
  await store.settle({
    reservationId: result.reservation.id,
    requestId: unique('req'),
    costMicro: cost,
    usage: USAGE,
    now,
  });
  return result;
}
