/** The console's read endpoints: one request per page, everything the page shows in one answer. */
import { SvcError } from '../../../errors/index.js';
import { formatUsd } from '../../../money/index.js';
import { effectiveKeyLimits } from '../../budget/effectiveLimits.js';
import { periodResetsAt } from '../../budget/periods.js';
import { keyState } from '../../keys/keyState.js';
import { keyView } from '../../server/keyView.js';
import {
  type KeyRecord,
  type Limits,
  type LogFilter,
  type LogRow,
  PERIODS,
  type UsageDimension,
} from '../../store/types.js';
import { networkPage, walletsPage } from './buyerViews.js';
import type { ConsoleDeps } from './deps.js';
import { requireAdmin, requireStaff, type StaffViewer, scopedFilter } from './scope.js';
import type { Viewer } from './sessions.js';

const DAY_MS = 86_400_000;
const CHART_DAYS = 30;

const usd = (micro: bigint | null) => (micro === null ? null : formatUsd(micro));

export function limitsJson(limits: Limits) {
  return Object.fromEntries(PERIODS.map((p) => [p, usd(limits[p])]));
}

export function logJson(row: LogRow) {
  return {
    id: row.id,
    at: new Date(row.at).toISOString(),
    keyId: row.keyId,
    memberId: row.memberId,
    endUser: row.endUser,
    route: row.route,
    model: row.servedModel ?? row.requestedModel,
    seller: row.peerId,
    provider: row.provider,
    status: row.status,
    errorCode: row.errorCode,
    inputTokens: row.inputTokens,
    cachedInputTokens: row.cachedInputTokens,
    outputTokens: row.outputTokens,
    costUsd: formatUsd(row.costMicro),
    latencyMs: row.latencyMs,
  };
}

async function daily(deps: ConsoleDeps, filter: { keyId?: string; workspaceId?: string }) {
  const now = deps.now();
  const since = Math.floor(now / DAY_MS) * DAY_MS - (CHART_DAYS - 1) * DAY_MS;
  const rows = await deps.store.consoleTables().dailySpend({ ...filter, since });
  const byDay = new Map(rows.map((r) => [r.day, r]));
  return Array.from({ length: CHART_DAYS }, (_, i) => {
    const day = since + i * DAY_MS;
    const row = byDay.get(day);
    return { day: new Date(day).toISOString().slice(0, 10), costUsd: usd(row?.costMicro ?? 0n) };
  });
}

/** The key holder's page: GET /v1/key's numbers, reset times, daily spend, top-ups, recent requests. */
async function mePage(deps: ConsoleDeps, key: KeyRecord) {
  const now = deps.now();
  const [view, spendByDay, logs, topups] = await Promise.all([
    keyView(deps.store, key, deps.buyerAddress(key.identity), now),
    daily(deps, { keyId: key.id }),
    deps.store.queryLogs({ keyId: key.id, limit: 50 }),
    deps.store.consoleTables().listTopups(key.id, 20),
  ]);
  const resets = Object.fromEntries(
    PERIODS.map((p) => {
      const at = periodResetsAt(p, now);
      return [p, at === null ? null : new Date(at).toISOString()];
    }),
  );
  return {
    key: view.data,
    state: keyState(key, now),
    resetsAt: resets,
    spendByDay,
    logs: logs.map(logJson),
    topups: topups.map((t) => ({
      at: new Date(t.at).toISOString(),
      amountUsd: formatUsd(t.amountMicro),
      state: t.state,
      transaction: t.transaction,
    })),
  };
}

async function keysPage(deps: ConsoleDeps, viewer: StaffViewer) {
  const now = deps.now();
  const [keys, workspaces, members] = await Promise.all([
    deps.store.listKeys(viewer.kind === 'member' ? { memberId: viewer.member.id } : {}),
    deps.store.listWorkspaces(),
    deps.store.listMembers(),
  ]);
  const visibleWs =
    viewer.kind === 'member'
      ? workspaces.filter((w) => viewer.member.workspaces.some((m) => m.workspaceId === w.id))
      : workspaces;
  const rows = await Promise.all(
    keys.map(async (key) => {
      const [spend, usage] = await Promise.all([
        deps.store.periodSpend('key', key.id, now),
        deps.store.keyUsage(key.id),
      ]);
      return {
        id: key.id,
        label: key.label,
        state: keyState(key, now),
        workspace: workspaces.find((w) => w.id === key.workspaceId)?.name ?? key.workspaceId,
        member: members.find((m) => m.id === key.memberId)?.name ?? null,
        limits: limitsJson(effectiveKeyLimits(key.adminLimits, key.ownerLimits)),
        adminLimits: limitsJson(key.adminLimits),
        spent: Object.fromEntries(PERIODS.map((p) => [p, formatUsd(spend[p])])),
        requests: usage.requests,
        totalSpentUsd: formatUsd(usage.spentMicro),
        expiresAt: key.expiresAt === null ? null : new Date(key.expiresAt).toISOString(),
        models: key.allowedModels,
        topupEnabled: key.topupEnabled,
        ownIdentity: key.ownIdentity,
        policy: key.policy,
      };
    }),
  );
  return {
    keys: rows,
    workspaces: visibleWs.map((w) => w.name),
    members: viewer.kind === 'member' ? [viewer.member.name] : members.map((m) => m.name),
    keyQuota: viewer.kind === 'member' ? viewer.member.keyQuota : null,
  };
}

async function membersPage(deps: ConsoleDeps, viewer: StaffViewer) {
  const [members, workspaces] = await Promise.all([
    deps.store.listMembers(),
    deps.store.listWorkspaces(),
  ]);
  const mine = (id: string) =>
    viewer.kind === 'admin' || viewer.member.workspaces.some((m) => m.workspaceId === id);
  const names = new Map(workspaces.map((w) => [w.id, w.name]));
  return {
    members: members
      .filter((m) => viewer.kind === 'admin' || m.id === viewer.member.id)
      .map((m) => ({
        id: m.id,
        name: m.name,
        orgRole: m.orgRole,
        keyQuota: m.keyQuota,
        disabled: m.disabled,
        limits: limitsJson(m.limits),
        workspaces: m.workspaces.map((w) => ({ name: names.get(w.workspaceId), role: w.role })),
      })),
    workspaces: workspaces
      .filter((w) => mine(w.id))
      .map((w) => ({
        id: w.id,
        name: w.name,
        identity: w.identity,
        address: deps.buyerAddress(w.identity),
        limits: limitsJson(w.limits),
        createdAt: new Date(w.createdAt).toISOString(),
      })),
  };
}

async function policiesPage(deps: ConsoleDeps, viewer: StaffViewer) {
  const [presets, workspaces, members] = await Promise.all([
    deps.store.listPresets(),
    deps.store.listWorkspaces(),
    deps.store.listMembers(),
  ]);
  const admin = viewer.kind === 'admin';
  const mineWs = (id: string) =>
    admin ||
    (viewer.kind === 'member' && viewer.member.workspaces.some((m) => m.workspaceId === id));
  return {
    presets: presets
      .filter((p) => p.owner === '' || mineWs(p.owner))
      .map((p) => ({
        name: p.name,
        owner:
          p.owner === ''
            ? 'organisation'
            : (workspaces.find((w) => w.id === p.owner)?.name ?? p.owner),
        model: p.model,
        policy: p.policy,
      })),
    workspaces: workspaces
      .filter((w) => mineWs(w.id))
      .map((w) => ({ name: w.name, policy: w.policy })),
    members: members
      .filter((m) => admin || (viewer.kind === 'member' && m.id === viewer.member.id))
      .map((m) => ({ name: m.name, policy: m.policy })),
  };
}

/** Parses the filter query of the logs page and CSV export (bounded). */
export function logFilterOf(query: URLSearchParams): LogFilter {
  const text = (name: string) => {
    const value = query.get(name)?.trim();
    if (!value) return undefined;
    if (value.length > 200)
      throw new SvcError('invalid_argument', { message: `${name} is too long` });
    return value;
  };
  const time = (name: string) => {
    const value = text(name);
    if (value === undefined) return undefined;
    const at = Date.parse(value);
    if (Number.isNaN(at))
      throw new SvcError('invalid_argument', { message: `${name}: not a time` });
    return at;
  };
  const limit = Number(query.get('limit') ?? 200);
  return {
    keyId: text('key'),
    memberId: text('member'),
    model: text('model'),
    seller: text('seller'),
    endUser: text('end_user'),
    since: time('since'),
    until: time('until'),
    limit: Number.isInteger(limit) && limit > 0 ? Math.min(limit, 5000) : 200,
  };
}

async function memberIdOf(deps: ConsoleDeps, filter: LogFilter): Promise<LogFilter> {
  if (!filter.memberId || filter.memberId.startsWith('mem_')) return filter;
  const member = await deps.store.findMemberByName(filter.memberId);
  return { ...filter, memberId: member?.id ?? filter.memberId };
}

/** The log rows a viewer may read under a filter. */
export async function visibleLogs(deps: ConsoleDeps, viewer: StaffViewer, query: URLSearchParams) {
  const filter = scopedFilter(viewer, await memberIdOf(deps, logFilterOf(query)));
  return deps.store.queryLogs(filter);
}

async function usagePage(deps: ConsoleDeps, viewer: StaffViewer, query: URLSearchParams) {
  const filter = scopedFilter(viewer, { since: logFilterOf(query).since });
  const dims: UsageDimension[] = ['model', 'seller', 'end_user', 'key'];
  const [spendByDay, notServed, ...summaries] = await Promise.all([
    viewer.kind === 'admin' ? daily(deps, {}) : Promise.resolve(null),
    deps.store.unservedRequests(filter),
    ...dims.map((by) => deps.store.usageSummary(by, filter)),
  ]);
  return {
    spendByDay,
    notServed,
    by: Object.fromEntries(
      dims.map((by, i) => [
        by,
        (summaries[i] ?? []).map((r) => ({
          group: r.group,
          requests: r.requests,
          inputTokens: r.inputTokens,
          outputTokens: r.outputTokens,
          costUsd: formatUsd(r.costMicro),
        })),
      ]),
    ),
  };
}

async function auditPage(deps: ConsoleDeps) {
  const entries = await deps.store.consoleTables().listAudit(200);
  return {
    entries: entries.map((e) => ({ ...e, at: new Date(e.at).toISOString() })),
  };
}

/** The data of `page` for `viewer`; 403 when the viewer may not see it. */
export async function pageData(
  deps: ConsoleDeps,
  viewer: Viewer,
  page: string,
  query: URLSearchParams,
): Promise<unknown> {
  if (page === 'home') return pageData(deps, viewer, viewer.kind === 'key' ? 'me' : 'keys', query);
  if (page === 'me') {
    if (viewer.kind !== 'key') throw new SvcError('console_forbidden');
    return { page, ...(await mePage(deps, viewer.key)) };
  }
  switch (page) {
    case 'keys':
      return { page, ...(await keysPage(deps, requireStaff(viewer))) };
    case 'members':
      return { page, ...(await membersPage(deps, requireStaff(viewer))) };
    case 'policies':
      return { page, ...(await policiesPage(deps, requireStaff(viewer))) };
    case 'logs':
      return { page, logs: (await visibleLogs(deps, requireStaff(viewer), query)).map(logJson) };
    case 'usage':
      return { page, ...(await usagePage(deps, requireStaff(viewer), query)) };
    case 'network':
      requireStaff(viewer);
      return { page, ...(await networkPage(deps)) };
    case 'wallets':
      return { page, ...(await walletsPage(deps, requireStaff(viewer))) };
    case 'audit':
      requireAdmin(viewer);
      return { page, ...(await auditPage(deps)) };
    default:
      throw new SvcError('not_found');
  }
}
