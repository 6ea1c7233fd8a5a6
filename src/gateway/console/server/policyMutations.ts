/**
 * Routing policies and presets from the console: the policy arrives as the JSON object the
 * store keeps (validated by the gateway's routingPolicySchema) and is written with the same
 * store calls as `svc gateway policy set` / `preset create|remove`.
 */
import { SvcError } from '../../../errors/index.js';
import { requireWorkspace } from '../../admin/workspaces.js';
import { type RoutingPolicy, routingPolicySchema } from '../../policy/types.js';
import type { ConsoleDeps } from './deps.js';
import { optionalText } from './parseBody.js';

type Body = Record<string, unknown>;

function invalid(message: string): SvcError {
  return new SvcError('invalid_argument', { message });
}

/** The body's `policy`: null clears, an object must match the routing-policy schema. */
function policyOf(body: Body): RoutingPolicy | null {
  if (body.policy === null) return null;
  const parsed = routingPolicySchema.safeParse(body.policy);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalid(`invalid policy: ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`.trim());
  }
  return parsed.data;
}

/** Sets or clears the policy of a workspace, member or key (by name or key id); returns the target. */
export async function setPolicy(deps: ConsoleDeps, body: Body): Promise<string> {
  const scope = optionalText(body, 'scope');
  const name = optionalText(body, 'name') ?? '';
  const policy = policyOf(body);
  if (scope === 'workspace') {
    const workspace = await requireWorkspace(deps.store, name, deps.now());
    await deps.store.setWorkspacePolicy(workspace.id, policy);
    return `workspace ${workspace.name}`;
  }
  if (scope === 'member') {
    const member = await deps.store.findMemberByName(name);
    if (!member) throw invalid(`no member named "${name}"`);
    await deps.store.setMemberPolicy(member.id, policy);
    return `member ${member.name}`;
  }
  if (scope === 'key') {
    if (!(await deps.store.getKey(name))) throw invalid(`no key ${name}`);
    await deps.store.setKeyPolicy(name, policy);
    return `key ${name}`;
  }
  throw invalid('scope must be workspace, member or key');
}

/** Creates or replaces a preset (organisation-wide, or owned by a workspace); returns its name. */
export async function savePreset(deps: ConsoleDeps, body: Body): Promise<string> {
  const name = optionalText(body, 'name') ?? '';
  if (!/^[A-Za-z0-9._-]+$/.test(name))
    throw invalid('preset names use letters, digits, ".", "_" and "-"');
  const workspace = optionalText(body, 'workspace');
  const owner = workspace ? (await requireWorkspace(deps.store, workspace, deps.now())).id : '';
  const policy = policyOf(body);
  if (policy === null) throw invalid('a preset needs a policy object');
  await deps.store.upsertPreset({
    name,
    owner,
    model: optionalText(body, 'model') ?? null,
    policy,
    createdAt: deps.now(),
  });
  return `@preset/${name}`;
}

/** Removes a preset; returns its name. */
export async function removePreset(deps: ConsoleDeps, body: Body): Promise<string> {
  const name = optionalText(body, 'name') ?? '';
  const workspace = optionalText(body, 'workspace');
  const owner = workspace ? (await requireWorkspace(deps.store, workspace, deps.now())).id : '';
  if (!(await deps.store.removePreset(name, owner))) throw invalid(`no preset ${name}`);
  return `@preset/${name}`;
}
