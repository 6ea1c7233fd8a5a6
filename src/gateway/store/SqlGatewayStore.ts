/** GatewayStore over any SqlDb: the one implementation of the entity SQL, two drivers below it. */
import type { MicroUsd } from '../../money/index.js';
import type { TopupLedger } from '../../x402/index.js';
import type { RoutingPolicy } from '../policy/types.js';
import { migrate } from './migrations.js';
import * as budgets from './sql/budgets.js';
import { CallerCache } from './sql/callerCache.js';
import * as callers from './sql/callers.js';
import { type ConsoleTables, SqlConsoleTables } from './sql/console.js';
import * as keys from './sql/keys.js';
import * as logs from './sql/logs.js';
import * as members from './sql/members.js';
import * as presets from './sql/presets.js';
import type { SqlDb } from './sql/SqlDb.js';
import { SettleQueue } from './sql/settleQueue.js';
import { SqlTopupLedger } from './sql/topups.js';
import * as workspaces from './sql/workspaces.js';
import type {
  BudgetLevel,
  CallerRecord,
  GatewayStore,
  KeyRecord,
  KeyUsage,
  Limits,
  LogFilter,
  LogRow,
  MemberRecord,
  NewKey,
  OrgRole,
  PeriodSpend,
  PresetRecord,
  ReserveInput,
  ReserveResult,
  SettleInput,
  UsageDimension,
  UsageSummaryRow,
  WorkspaceRecord,
  WorkspaceRole,
} from './types.js';

export class SqlGatewayStore implements GatewayStore {
  readonly kind: 'sqlite' | 'postgres';
  private readonly db: SqlDb;
  private readonly now: () => number;
  /**
   * SQLite: settlements and reservations share transactions (decisions 156, 159); PostgreSQL
   * reserves and settles one by one.
   */
  private readonly settles: SettleQueue | null;
  /** SQLite: callers and their scopes kept while their rows are unchanged (decision 159). */
  private readonly callerCache: CallerCache | null;

  constructor(db: SqlDb, now: () => number = Date.now) {
    this.db = db;
    this.kind = db.dialect;
    this.now = now;
    this.settles = db.dialect === 'sqlite' ? new SettleQueue(db) : null;
    this.callerCache = CallerCache.of(db);
  }

  migrate(): Promise<number> {
    return migrate(this.db, this.now());
  }
  async close(): Promise<void> {
    await this.settles?.flush();
    return this.db.close();
  }
  topupLedger(): TopupLedger {
    return new SqlTopupLedger(this.db);
  }
  consoleTables(): ConsoleTables {
    return new SqlConsoleTables(this.db);
  }

  createWorkspace(input: {
    id: string;
    name: string;
    identity: string;
    createdAt: number;
  }): Promise<WorkspaceRecord> {
    return workspaces.createWorkspace(this.db, input);
  }
  getWorkspace(id: string): Promise<WorkspaceRecord | null> {
    return workspaces.findWorkspace(this.db, 'id', id);
  }
  findWorkspaceByName(name: string): Promise<WorkspaceRecord | null> {
    return workspaces.findWorkspace(this.db, 'name', name);
  }
  findWorkspaceByIdentity(identity: string): Promise<WorkspaceRecord | null> {
    return workspaces.findWorkspace(this.db, 'identity', identity);
  }
  listWorkspaces(): Promise<WorkspaceRecord[]> {
    return workspaces.listWorkspaces(this.db);
  }
  setWorkspaceLimits(id: string, limits: Partial<Limits>): Promise<void> {
    return workspaces.setWorkspaceLimits(this.db, id, limits);
  }
  setWorkspacePolicy(id: string, policy: RoutingPolicy | null): Promise<void> {
    return workspaces.setWorkspacePolicy(this.db, id, policy);
  }

  createMember(input: {
    id: string;
    name: string;
    orgRole: OrgRole;
    keyQuota: number | null;
    createdAt: number;
  }): Promise<MemberRecord> {
    return members.createMember(this.db, input);
  }
  addMembership(memberId: string, workspaceId: string, role: WorkspaceRole): Promise<void> {
    return members.addMembership(this.db, memberId, workspaceId, role);
  }
  getMember(id: string): Promise<MemberRecord | null> {
    return members.findMember(this.db, 'id', id);
  }
  findMemberByName(name: string): Promise<MemberRecord | null> {
    return members.findMember(this.db, 'name', name);
  }
  listMembers(): Promise<MemberRecord[]> {
    return members.listMembers(this.db);
  }
  setMemberDisabled(id: string, disabled: boolean): Promise<void> {
    return members.updateMember(this.db, id, { disabled });
  }
  setMemberLimits(id: string, limits: Partial<Limits>): Promise<void> {
    return members.updateMember(this.db, id, { limits });
  }
  setMemberQuota(id: string, keyQuota: number | null): Promise<void> {
    return members.updateMember(this.db, id, { keyQuota });
  }
  setMemberPolicy(id: string, policy: RoutingPolicy | null): Promise<void> {
    return members.updateMember(this.db, id, { policy });
  }

  createKey(input: NewKey): Promise<KeyRecord> {
    return keys.createKey(this.db, input);
  }
  getKey(id: string): Promise<KeyRecord | null> {
    return keys.findKey(this.db, 'id', id);
  }
  findKeyBySecretHash(secretHash: string): Promise<KeyRecord | null> {
    return keys.findKey(this.db, 'secret_hash', secretHash);
  }
  findCaller(secretHash: string): Promise<CallerRecord | null> {
    const read = () => callers.findCaller(this.db, secretHash);
    return this.callerCache ? this.callerCache.caller(secretHash, read) : read();
  }
  listKeys(filter?: { workspaceId?: string; memberId?: string }): Promise<KeyRecord[]> {
    return keys.listKeys(this.db, filter);
  }
  countKeysOfMember(memberId: string): Promise<number> {
    return keys.countKeysOfMember(this.db, memberId);
  }
  revokeKey(id: string, at: number): Promise<boolean> {
    return keys.revokeKey(this.db, id, at);
  }
  rotateKey(id: string, secretHash: string): Promise<boolean> {
    return keys.rotateKey(this.db, id, secretHash);
  }
  setKeyLimits(id: string, who: 'admin' | 'owner', limits: Partial<Limits>): Promise<void> {
    return keys.setKeyLimits(this.db, id, who, limits);
  }
  setKeyTopup(id: string, enabled: boolean): Promise<void> {
    return keys.setKeyFlag(this.db, id, { topupEnabled: enabled });
  }
  setKeyPolicy(id: string, policy: RoutingPolicy | null): Promise<void> {
    return keys.setKeyFlag(this.db, id, { policy });
  }

  addKeyTopUp(id: string, amountMicro: MicroUsd): Promise<void> {
    return keys.addKeyTopUp(this.db, id, amountMicro);
  }

  upsertPreset(preset: PresetRecord): Promise<void> {
    return presets.upsertPreset(this.db, preset);
  }
  getPreset(name: string, owner: string): Promise<PresetRecord | null> {
    return presets.getPreset(this.db, name, owner);
  }
  listPresets(): Promise<PresetRecord[]> {
    return presets.listPresets(this.db);
  }
  removePreset(name: string, owner: string): Promise<boolean> {
    return presets.removePreset(this.db, name, owner);
  }

  reserve(input: ReserveInput): Promise<ReserveResult> {
    const { settles } = this;
    if (!settles) return budgets.reserve(this.db, input);
    return settles.reserve((tx) => budgets.reserveIn(this.db, tx, input, this.callerCache));
  }
  settle(input: SettleInput): Promise<void> {
    if (this.settles) return this.settles.settle(input);
    return budgets.settle(this.db, input, true);
  }
  /** Reads of spend see every settlement this process has made. */
  private async settled(): Promise<void> {
    await this.settles?.flush();
  }
  release(reservationId: string): Promise<void> {
    return budgets.settle(
      this.db,
      {
        reservationId,
        requestId: '',
        costMicro: 0n,
        usage: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 },
        now: this.now(),
      },
      false,
    );
  }
  async listReservations(
    before: number,
  ): Promise<Array<{ id: string; keyId: string; amountMicro: MicroUsd; createdAt: number }>> {
    await this.settled();
    return budgets.listReservations(this.db, before);
  }
  async periodSpend(level: BudgetLevel, scopeId: string, now: number): Promise<PeriodSpend> {
    await this.settled();
    return budgets.periodSpend(this.db, level, scopeId, now);
  }
  async keyUsage(keyId: string): Promise<KeyUsage> {
    await this.settled();
    return budgets.keyUsage(this.db, keyId);
  }
  async ledgerTotal(keyId: string): Promise<MicroUsd> {
    await this.settled();
    return (await budgets.keyUsage(this.db, keyId)).spentMicro;
  }

  insertLog(row: LogRow): Promise<void> {
    return logs.insertLog(this.db, row);
  }
  insertLogs(rows: readonly LogRow[]): Promise<void> {
    return this.db.transaction(async (tx) => {
      for (const row of rows) await logs.insertLog(tx, row);
    });
  }
  queryLogs(filter: LogFilter): Promise<LogRow[]> {
    return logs.queryLogs(this.db, filter);
  }
  usageSummary(by: UsageDimension, filter: LogFilter): Promise<UsageSummaryRow[]> {
    return logs.usageSummary(this.db, by, filter);
  }
  unservedRequests(filter: LogFilter): Promise<number> {
    return logs.unservedRequests(this.db, filter);
  }
  pruneLogs(before: number): Promise<number> {
    return logs.pruneLogs(this.db, before);
  }
}
