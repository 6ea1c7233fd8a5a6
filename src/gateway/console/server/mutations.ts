/**
 * Console mutations: the same admin functions and store calls as `svc gateway ...`, each one
 * written to the audit log (who, what, when). Secrets appear only in the answer that creates them.
 */
import { SvcError } from '../../../errors/index.js';
import { createKey, rotateKey } from '../../admin/createKey.js';
import { addMember } from '../../admin/members.js';
import { createNamedWorkspace, newId } from '../../admin/workspaces.js';
import type { ConsoleSessionKind } from '../../store/sql/console.js';
import type { GatewayStore } from '../../store/types.js';
import type { ConsoleDeps } from './deps.js';
import { expiryOf, flagOf, limitsOf, modelsOf, optionalText, quotaOf } from './parseBody.js';
import { removePreset, savePreset, setPolicy } from './policyMutations.js';
import { mayManageKey, requireAdmin, requireStaff, type StaffViewer } from './scope.js';
import type { Viewer } from './sessions.js';

type Body = Record<string, unknown>;

async function audit(
  deps: ConsoleDeps,
  viewer: StaffViewer,
  action: string,
  target: string,
  detail: Record<string, unknown> = {},
): Promise<void> {
  await deps.store.consoleTables().insertAudit({
    id: newId('aud'),
    at: deps.now(),
    actor: viewer.actor,
    action,
    target,
    detail: JSON.stringify(detail, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
  });
}

async function endSessionsOf(store: GatewayStore, kind: ConsoleSessionKind, id: string) {
  await store.consoleTables().deleteSessionsOf(kind, id);
}

async function createKeyAction(deps: ConsoleDeps, viewer: StaffViewer, body: Body) {
  const now = deps.now();
  const member = viewer.kind === 'member' ? viewer.member.name : optionalText(body, 'member');
  let workspace = optionalText(body, 'workspace');
  const first = viewer.kind === 'member' ? viewer.member.workspaces[0] : undefined;
  if (workspace === undefined && first) {
    // A member's key belongs to one of the member's workspaces (createKey checks membership).
    workspace = (await deps.store.getWorkspace(first.workspaceId))?.name;
  }
  if (viewer.kind === 'member' && flagOf(body, 'newIdentity'))
    throw new SvcError('console_forbidden');
  const limits = limitsOf(body);
  const created = await createKey(
    deps.store,
    deps.identities,
    {
      label: optionalText(body, 'label') ?? '',
      workspace,
      member,
      limits,
      expiresAt: expiryOf(body, now) ?? null,
      identity: flagOf(body, 'newIdentity') ? { kind: 'new' } : undefined,
      allowTopup: flagOf(body, 'allowTopup'),
      models: modelsOf(body) ?? null,
    },
    now,
  );
  await audit(deps, viewer, 'key.create', created.key.id, {
    label: created.key.label,
    member: member ?? null,
    limits,
  });
  return { id: created.key.id, label: created.key.label, secret: created.secret };
}

async function editKey(deps: ConsoleDeps, viewer: StaffViewer, id: string, body: Body) {
  const key = mayManageKey(viewer, await deps.store.getKey(id));
  const now = deps.now();
  const label = optionalText(body, 'label');
  const expiresAt = expiryOf(body, now);
  const models = modelsOf(body);
  const limits = limitsOf(body);
  const topup = flagOf(body, 'topupEnabled');
  if (label !== undefined && !label)
    throw new SvcError('invalid_argument', { message: 'label must not be empty' });
  if (topup && !key.ownIdentity) throw new SvcError('topup_not_available');
  // Members set the owner's limits; the effective limit is the lower of admin and owner.
  const who = viewer.kind === 'admin' ? 'admin' : 'owner';
  if (Object.keys(limits).length > 0) await deps.store.setKeyLimits(id, who, limits);
  await deps.store.consoleTables().setKeyDetails(id, { label, expiresAt, allowedModels: models });
  if (topup !== undefined) await deps.store.setKeyTopup(id, topup);
  await audit(deps, viewer, 'key.edit', id, {
    label,
    expiresAt: expiresAt === undefined ? undefined : expiresAt && new Date(expiresAt).toISOString(),
    models,
    limits: Object.keys(limits).length > 0 ? { [who]: limits } : undefined,
    topupEnabled: topup,
  });
  return { id };
}

async function revoke(deps: ConsoleDeps, viewer: StaffViewer, id: string) {
  mayManageKey(viewer, await deps.store.getKey(id));
  const revoked = await deps.store.revokeKey(id, deps.now());
  await endSessionsOf(deps.store, 'key', id);
  await audit(deps, viewer, 'key.revoke', id);
  return { id, revoked };
}

async function rotate(deps: ConsoleDeps, viewer: StaffViewer, id: string) {
  mayManageKey(viewer, await deps.store.getKey(id));
  const { secret } = await rotateKey(deps.store, id);
  await endSessionsOf(deps.store, 'key', id);
  await audit(deps, viewer, 'key.rotate', id);
  return { id, secret };
}

async function editMember(deps: ConsoleDeps, viewer: StaffViewer, id: string, body: Body) {
  requireAdmin(viewer);
  const member = await deps.store.getMember(id);
  if (!member) throw new SvcError('invalid_argument', { message: 'no such member' });
  const disabled = flagOf(body, 'disabled');
  const quota = quotaOf(body);
  const limits = limitsOf(body);
  if (disabled !== undefined) {
    await deps.store.setMemberDisabled(id, disabled);
    if (disabled) await endSessionsOf(deps.store, 'member', id);
  }
  if (quota !== undefined) await deps.store.setMemberQuota(id, quota);
  if (Object.keys(limits).length > 0) await deps.store.setMemberLimits(id, limits);
  await audit(deps, viewer, 'member.edit', member.name, { disabled, keyQuota: quota, limits });
  return { id };
}

async function editWorkspace(deps: ConsoleDeps, viewer: StaffViewer, id: string, body: Body) {
  requireAdmin(viewer);
  const workspace = await deps.store.getWorkspace(id);
  if (!workspace) throw new SvcError('invalid_argument', { message: 'no such workspace' });
  const limits = limitsOf(body);
  if (Object.keys(limits).length > 0) await deps.store.setWorkspaceLimits(id, limits);
  await audit(deps, viewer, 'workspace.edit', workspace.name, { limits });
  return { id };
}

async function addMemberAction(deps: ConsoleDeps, viewer: StaffViewer, body: Body) {
  requireAdmin(viewer);
  const input = {
    name: optionalText(body, 'name') ?? '',
    workspace: optionalText(body, 'workspace') ?? 'Default',
    role: optionalText(body, 'role') ?? 'member',
    orgRole: optionalText(body, 'orgRole'),
    keyQuota: quotaOf(body),
  };
  const member = await addMember(deps.store, input, deps.now());
  await audit(deps, viewer, 'member.add', member.name, input);
  return { id: member.id };
}

async function createWorkspaceAction(deps: ConsoleDeps, viewer: StaffViewer, body: Body) {
  requireAdmin(viewer);
  const input = {
    name: optionalText(body, 'name') ?? '',
    identity: optionalText(body, 'identity'),
    newIdentity: flagOf(body, 'newIdentity'),
  };
  const workspace = await createNamedWorkspace(deps.store, deps.identities, input, deps.now());
  await audit(deps, viewer, 'workspace.create', workspace.name, { identity: workspace.identity });
  return { id: workspace.id };
}

/** Runs `POST /console/api/<path>` for a signed-in viewer; key sessions get 403. */
export async function runMutation(
  deps: ConsoleDeps,
  viewerIn: Viewer,
  path: string,
  body: Body,
): Promise<unknown> {
  const viewer = requireStaff(viewerIn);
  if (path === 'keys') return createKeyAction(deps, viewer, body);
  if (path === 'members') return addMemberAction(deps, viewer, body);
  if (path === 'workspaces') return createWorkspaceAction(deps, viewer, body);
  if (path === 'policies/set' || path === 'presets/save' || path === 'presets/remove') {
    requireAdmin(viewer);
    const run = {
      'policies/set': setPolicy,
      'presets/save': savePreset,
      'presets/remove': removePreset,
    }[path];
    const target = await run(deps, body);
    await audit(deps, viewer, path.replace('/', '.'), target, {
      policy: body.policy,
      model: body.model,
    });
    return { target };
  }
  const match = /^(keys|members|workspaces)\/([A-Za-z0-9_-]{1,80})\/(edit|revoke|rotate)$/.exec(
    path,
  );
  if (!match) throw new SvcError('not_found');
  const [, kind, id, action] = match as unknown as [string, string, string, string];
  if (kind === 'keys' && action === 'edit') return editKey(deps, viewer, id, body);
  if (kind === 'keys' && action === 'revoke') return revoke(deps, viewer, id);
  if (kind === 'keys' && action === 'rotate') return rotate(deps, viewer, id);
  if (kind === 'members' && action === 'edit') return editMember(deps, viewer, id, body);
  if (kind === 'workspaces' && action === 'edit') return editWorkspace(deps, viewer, id, body);
  throw new SvcError('not_found');
}
