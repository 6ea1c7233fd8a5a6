/** Records and the store interface of the gateway (keys, workspaces, members, budgets, logs). */
import type { MicroUsd } from '../../money/index.js';
import type { TopupLedger } from '../../x402/index.js';
import type { RoutingPolicy } from '../policy/types.js';
import type { ConsoleTables } from './sql/console.js';

/** The four budget periods (UTC). */
export const PERIODS = ['daily', 'weekly', 'monthly', 'total'] as const;
export type Period = (typeof PERIODS)[number];

/** The three levels a budget can sit on, in the order they are checked. */
export const LEVELS = ['key', 'member', 'workspace'] as const;
export type BudgetLevel = (typeof LEVELS)[number];

/** A limit per period; null = no limit. */
export type Limits = Record<Period, MicroUsd | null>;

/** No limits at all. */
export const NO_LIMITS: Limits = { daily: null, weekly: null, monthly: null, total: null };

export interface WorkspaceRecord {
  id: string;
  name: string;
  /** The one identity this workspace pays from. */
  identity: string;
  limits: Limits;
  policy: RoutingPolicy | null;
  createdAt: number;
}

export type OrgRole = 'owner' | 'admin' | 'none';
export type WorkspaceRole = 'admin' | 'member';

/** A member without its memberships (what a request needs). */
export interface MemberCore {
  id: string;
  name: string;
  orgRole: OrgRole;
  /** How many keys the member may own; null = unlimited. */
  keyQuota: number | null;
  disabled: boolean;
  limits: Limits;
  policy: RoutingPolicy | null;
  createdAt: number;
}

export interface MemberRecord extends MemberCore {
  workspaces: Array<{ workspaceId: string; role: WorkspaceRole }>;
}

export interface KeyRecord {
  id: string;
  label: string;
  secretHash: string;
  workspaceId: string;
  memberId: string | null;
  identity: string;
  ownIdentity: boolean;
  /** null = every model. */
  allowedModels: string[] | null;
  topupEnabled: boolean;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
  adminLimits: Limits;
  ownerLimits: Limits;
  policy: RoutingPolicy | null;
  toppedUpMicro: MicroUsd;
}

export interface NewKey {
  id: string;
  label: string;
  secretHash: string;
  workspaceId: string;
  memberId: string | null;
  identity: string;
  ownIdentity: boolean;
  allowedModels: string[] | null;
  topupEnabled: boolean;
  createdAt: number;
  expiresAt: number | null;
  adminLimits: Limits;
}

export interface PresetRecord {
  name: string;
  /** Workspace id, or '' for the organisation. */
  owner: string;
  /** Model the preset routes to (the request's `@preset/<name>` is rewritten to it); null = unchanged. */
  model: string | null;
  policy: RoutingPolicy;
  createdAt: number;
}

/** A key with its member (null when it has none) and workspace (null when gone), read at once. */
export interface CallerRecord {
  key: KeyRecord;
  member: MemberCore | null;
  workspace: WorkspaceRecord | null;
}

/** Why a reservation was refused (the 402 details). */
export interface BudgetRefusal {
  level: BudgetLevel;
  period: Period;
  limitMicro: MicroUsd;
  spentMicro: MicroUsd;
  /** Spent + reserved by requests in flight. */
  committedMicro: MicroUsd;
  resetsAt: number | null;
}

export interface Reservation {
  id: string;
  keyId: string;
  amountMicro: MicroUsd;
  /** True when some level had a limit, i.e. the amount is a hard cap. */
  limited: boolean;
}

export type ReserveResult =
  | { ok: true; reservation: Reservation }
  | { ok: false; refusal: BudgetRefusal };

export interface TokenCounts {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
}

export interface ReserveInput {
  reservationId: string;
  keyId: string;
  maxAmountMicro: MicroUsd;
  /** All or nothing below this: refuse when a limited level has less room (default 1). */
  minAmountMicro?: MicroUsd;
  /**
   * Refuse also when a limited level has less room than `minAmountMicro` plus this (default 0):
   * room the reservation must leave. The gateway retries such a refusal exactly sized
   * (docs/decisions/159-gateway-auth-and-sizing-without-counting.md).
   */
  keepRoomMicro?: MicroUsd;
  now: number;
}

export interface SettleInput {
  reservationId: string;
  requestId: string;
  costMicro: MicroUsd;
  usage: TokenCounts;
  now: number;
  /**
   * Recovery settles after the request's log row was written (at cost 0): the row of
   * `requestId` logged at or after `since` gets the charged cost and tokens, and loses
   * `spend_tracking_unavailable`, in the same transaction.
   */
  correctLogSince?: number;
}

/** Spend per period of one scope at a moment. */
export type PeriodSpend = Record<Period, MicroUsd>;

export interface KeyUsage extends TokenCounts {
  requests: number;
  spentMicro: MicroUsd;
}

export interface LogRow {
  id: string;
  at: number;
  requestId: string | null;
  keyId: string | null;
  workspaceId: string | null;
  memberId: string | null;
  endUser: string | null;
  clientAddress: string | null;
  method: string;
  route: string;
  requestedModel: string | null;
  servedModel: string | null;
  peerId: string | null;
  provider: string | null;
  serviceId: string | null;
  status: number;
  errorCode: string | null;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  costMicro: MicroUsd;
  latencyMs: number | null;
  ttfbMs: number | null;
  streamed: boolean;
}

export interface LogFilter {
  keyId?: string;
  workspaceId?: string;
  since?: number;
  limit?: number;
  memberId?: string;
  /** Served or requested model. */
  model?: string;
  /** Seller peer id. */
  seller?: string;
  endUser?: string;
  /** Before this time (unix ms). */
  until?: number;
}

export type UsageDimension = 'key' | 'member' | 'model' | 'seller' | 'end_user';

export interface UsageSummaryRow {
  group: string | null;
  requests: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  costMicro: MicroUsd;
}

/** Everything the gateway persists. Implemented once over SqlDb for SQLite and PostgreSQL. */
export interface GatewayStore {
  readonly kind: 'sqlite' | 'postgres';
  migrate(): Promise<number>;
  close(): Promise<void>;
  /** x402 top-up rows (src/x402 TopupLedger), crediting api_keys.topped_up. */
  topupLedger(): TopupLedger;
  /** Web console sessions, sign-in links and audit log (docs/decisions/135-console-sign-in.md). */
  consoleTables(): ConsoleTables;

  createWorkspace(input: {
    id: string;
    name: string;
    identity: string;
    createdAt: number;
  }): Promise<WorkspaceRecord>;
  getWorkspace(id: string): Promise<WorkspaceRecord | null>;
  findWorkspaceByName(name: string): Promise<WorkspaceRecord | null>;
  findWorkspaceByIdentity(identity: string): Promise<WorkspaceRecord | null>;
  listWorkspaces(): Promise<WorkspaceRecord[]>;
  setWorkspaceLimits(id: string, limits: Partial<Limits>): Promise<void>;
  setWorkspacePolicy(id: string, policy: RoutingPolicy | null): Promise<void>;

  createMember(input: {
    id: string;
    name: string;
    orgRole: OrgRole;
    keyQuota: number | null;
    createdAt: number;
  }): Promise<MemberRecord>;
  addMembership(memberId: string, workspaceId: string, role: WorkspaceRole): Promise<void>;
  getMember(id: string): Promise<MemberRecord | null>;
  findMemberByName(name: string): Promise<MemberRecord | null>;
  listMembers(): Promise<MemberRecord[]>;
  setMemberDisabled(id: string, disabled: boolean): Promise<void>;
  setMemberLimits(id: string, limits: Partial<Limits>): Promise<void>;
  setMemberQuota(id: string, keyQuota: number | null): Promise<void>;
  setMemberPolicy(id: string, policy: RoutingPolicy | null): Promise<void>;

  createKey(input: NewKey): Promise<KeyRecord>;
  getKey(id: string): Promise<KeyRecord | null>;
  findKeyBySecretHash(secretHash: string): Promise<KeyRecord | null>;
  /** The key with this secret hash, its member and its workspace, in one read (the request path). */
  findCaller(secretHash: string): Promise<CallerRecord | null>;
  listKeys(filter?: { workspaceId?: string; memberId?: string }): Promise<KeyRecord[]>;
  countKeysOfMember(memberId: string): Promise<number>;
  revokeKey(id: string, at: number): Promise<boolean>;
  rotateKey(id: string, secretHash: string): Promise<boolean>;
  setKeyLimits(id: string, who: 'admin' | 'owner', limits: Partial<Limits>): Promise<void>;
  setKeyTopup(id: string, enabled: boolean): Promise<void>;
  setKeyPolicy(id: string, policy: RoutingPolicy | null): Promise<void>;
  /** Adds a settled x402 top-up to the key's `topped_up_usd` (for the top-up issue). */
  addKeyTopUp(id: string, amountMicro: MicroUsd): Promise<void>;

  upsertPreset(preset: PresetRecord): Promise<void>;
  getPreset(name: string, owner: string): Promise<PresetRecord | null>;
  listPresets(): Promise<PresetRecord[]>;
  removePreset(name: string, owner: string): Promise<boolean>;

  /**
   * Reserves up to `maxAmountMicro` on every level of the key in one atomic step; refuses when a
   * limited level has less room than `minAmountMicro` (default 1: any room).
   */
  reserve(input: ReserveInput): Promise<ReserveResult>;
  /** Charges the actual cost, releases the rest; a no-op for an unknown reservation. */
  settle(input: SettleInput): Promise<void>;
  /** Gives a reservation back untouched (nothing was served); no ledger row. */
  release(reservationId: string): Promise<void>;
  /** Reservations created before `before` (unix ms): candidates for crash recovery. */
  listReservations(
    before: number,
  ): Promise<Array<{ id: string; keyId: string; amountMicro: MicroUsd; createdAt: number }>>;
  /** Spend (settled) per period of a scope at `now`. */
  periodSpend(level: BudgetLevel, scopeId: string, now: number): Promise<PeriodSpend>;
  keyUsage(keyId: string): Promise<KeyUsage>;
  /** Sum of the ledger for a key (for audits: must equal the counters). */
  ledgerTotal(keyId: string): Promise<MicroUsd>;

  insertLog(row: LogRow): Promise<void>;
  /** Writes many rows in one transaction. */
  insertLogs(rows: readonly LogRow[]): Promise<void>;
  queryLogs(filter: LogFilter): Promise<LogRow[]>;
  /** Spend and tokens by one dimension, over the requests a seller served or was paid for. */
  usageSummary(by: UsageDimension, filter: LogFilter): Promise<UsageSummaryRow[]>;
  /** Requests refused or failed before any seller answered, at no cost (not in `usageSummary`). */
  unservedRequests(filter: LogFilter): Promise<number>;
  pruneLogs(before: number): Promise<number>;
}
