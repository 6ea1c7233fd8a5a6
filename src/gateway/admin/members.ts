/** Adding a member to a workspace (created on first add), with a role and a key quota. */
import { SvcError } from '../../errors/index.js';
import type { GatewayStore, MemberRecord, OrgRole, WorkspaceRole } from '../store/types.js';
import { newId, requireWorkspace } from './workspaces.js';

export interface AddMemberInput {
  name: string;
  workspace: string;
  role: string;
  orgRole?: string;
  /** undefined = unchanged (new members: unlimited); null = unlimited. */
  keyQuota?: number | null;
}

/** Adds `name` to a workspace with a role; creates the member on first add. */
export async function addMember(
  store: GatewayStore,
  input: AddMemberInput,
  now: number,
): Promise<MemberRecord> {
  if (input.role !== 'admin' && input.role !== 'member')
    throw new SvcError('invalid_argument', { message: '--role must be admin or member' });
  if (input.orgRole && !['owner', 'admin', 'none'].includes(input.orgRole))
    throw new SvcError('invalid_argument', { message: '--org-role must be owner, admin or none' });
  const name = input.name.trim();
  if (!name) throw new SvcError('invalid_argument', { message: 'give the member a name' });
  const workspace = await requireWorkspace(store, input.workspace, now);
  let record = await store.findMemberByName(name);
  if (!record) {
    record = await store.createMember({
      id: newId('mem'),
      name,
      orgRole: (input.orgRole ?? 'none') as OrgRole,
      keyQuota: input.keyQuota ?? null,
      createdAt: now,
    });
  } else if (input.keyQuota !== undefined) {
    await store.setMemberQuota(record.id, input.keyQuota);
  }
  await store.addMembership(record.id, workspace.id, input.role as WorkspaceRole);
  return (await store.getMember(record.id))!;
}
