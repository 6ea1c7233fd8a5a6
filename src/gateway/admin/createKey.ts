/** Creating a key: workspace and identity resolution, member quota, secret shown once. */
import { SvcError } from '../../errors/index.js';
import type { IdentityStore } from '../../identity/index.js';
import { hashSecret, newKeyId, newSecret } from '../keys/secrets.js';
import { ensureControlSecret } from '../server/controlSecret.js';
import { type GatewayStore, type KeyRecord, type Limits, NO_LIMITS } from '../store/types.js';
import { defaultWorkspace, requireWorkspace, workspaceForIdentity } from './workspaces.js';

export interface CreateKeyInput {
  label: string;
  workspace?: string;
  member?: string;
  limits?: Partial<Limits>;
  expiresAt?: number | null;
  /** A new identity for this key, or an existing one by name. */
  identity?: { kind: 'new' } | { kind: 'existing'; name: string };
  allowTopup?: boolean;
  models?: string[] | null;
}

export interface CreatedKey {
  key: KeyRecord;
  /** Shown once; only its hash is stored. */
  secret: string;
}

function invalid(message: string): SvcError {
  return new SvcError('invalid_argument', { message });
}

/** Creates a key; the secret is returned once. */
export async function createKey(
  store: GatewayStore,
  identities: IdentityStore,
  input: CreateKeyInput,
  now: number,
): Promise<CreatedKey> {
  if (!input.label.trim()) throw invalid('--label must not be empty');
  const id = newKeyId();
  let identity: string | null = null;
  if (input.identity?.kind === 'new') {
    identity = identities.create(id).name;
  } else if (input.identity?.kind === 'existing') {
    identity = input.identity.name;
    if (!identities.list().some((listing) => listing.name === identity)) {
      throw invalid(
        `no identity named "${identity}"; create it with \`svc buyer identity create ${identity}\``,
      );
    }
  }
  if (input.allowTopup && !identity) {
    throw new SvcError('topup_not_available', {
      message: 'Top-ups need a key with its own wallet: add --new-identity or --identity <name>.',
    });
  }
  const workspace = identity
    ? await workspaceForIdentity(store, identity, identity, now)
    : input.workspace
      ? await requireWorkspace(store, input.workspace, now)
      : await defaultWorkspace(store, now);
  if (identity && input.workspace && input.workspace !== workspace.name) {
    throw invalid(
      `identity "${identity}" is paid for by workspace "${workspace.name}", not "${input.workspace}"`,
    );
  }
  let memberId: string | null = null;
  if (input.member) {
    const member = await store.findMemberByName(input.member);
    if (!member) throw invalid(`no member named "${input.member}"`);
    if (member.disabled) throw invalid(`member "${member.name}" is disabled`);
    if (!member.workspaces.some((m) => m.workspaceId === workspace.id)) {
      throw invalid(`member "${member.name}" does not belong to workspace "${workspace.name}"`);
    }
    if (member.keyQuota !== null && (await store.countKeysOfMember(member.id)) >= member.keyQuota) {
      throw new SvcError('key_quota_reached', {
        message: `member "${member.name}" already has ${member.keyQuota} active keys, the most an admin allows`,
      });
    }
    memberId = member.id;
  }
  // The control secret exists from the first key on, so the buyer starts checking it.
  ensureControlSecret(identities.dataDir);
  const secret = newSecret();
  const key = await store.createKey({
    id,
    label: input.label.trim(),
    secretHash: hashSecret(secret),
    workspaceId: workspace.id,
    memberId,
    identity: workspace.identity,
    ownIdentity: identity !== null,
    allowedModels: input.models ?? null,
    topupEnabled: Boolean(input.allowTopup),
    createdAt: now,
    expiresAt: input.expiresAt ?? null,
    adminLimits: { ...NO_LIMITS, ...input.limits },
  });
  return { key, secret };
}

/** Issues a new secret for a key; the old one stops working at once. */
export async function rotateKey(
  store: GatewayStore,
  keyId: string,
): Promise<{ key: KeyRecord; secret: string }> {
  const secret = newSecret();
  if (!(await store.rotateKey(keyId, hashSecret(secret)))) {
    throw invalid(`no active key ${keyId} (revoked keys cannot be rotated)`);
  }
  return { key: (await store.getKey(keyId))!, secret };
}
