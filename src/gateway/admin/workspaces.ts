/** Workspace administration: the Default workspace (pays from `default`) and named ones. */
import { randomBytes } from 'node:crypto';
import { SvcError } from '../../errors/index.js';
// The name from its own module: the identity index loads viem, which listing keys never needs.
import { DEFAULT_IDENTITY } from '../../identity/defaultName.js';
import type { IdentityStore } from '../../identity/index.js';
import type { GatewayStore, WorkspaceRecord } from '../store/types.js';

export const DEFAULT_WORKSPACE = 'Default';

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(9).toString('base64url')}`;
}

/** The workspace paying with `identity`, created (named `name`) when none does. */
export async function workspaceForIdentity(
  store: GatewayStore,
  identity: string,
  name: string,
  now: number,
): Promise<WorkspaceRecord> {
  const existing = await store.findWorkspaceByIdentity(identity);
  if (existing) return existing;
  try {
    return await store.createWorkspace({ id: newId('ws'), name, identity, createdAt: now });
  } catch (error) {
    // Another process created it at the same moment.
    const raced = await store.findWorkspaceByIdentity(identity);
    if (raced) return raced;
    throw error;
  }
}

/** The Default workspace, created on first use. */
export function defaultWorkspace(store: GatewayStore, now: number): Promise<WorkspaceRecord> {
  return workspaceForIdentity(store, DEFAULT_IDENTITY, DEFAULT_WORKSPACE, now);
}

/** A workspace by name (Default is created on demand), or a clear error. */
export async function requireWorkspace(
  store: GatewayStore,
  name: string,
  now: number,
): Promise<WorkspaceRecord> {
  if (name === DEFAULT_WORKSPACE) return defaultWorkspace(store, now);
  const workspace = await store.findWorkspaceByName(name);
  if (!workspace) {
    throw new SvcError('invalid_argument', {
      message: `no workspace named "${name}"; list them with \`svc gateway workspace list\``,
    });
  }
  return workspace;
}

/** Creates a named workspace paying from an existing identity or a new one named after it. */
export async function createNamedWorkspace(
  store: GatewayStore,
  identities: IdentityStore,
  input: { name: string; identity?: string; newIdentity?: boolean },
  now: number,
): Promise<WorkspaceRecord> {
  const invalid = (message: string) => new SvcError('invalid_argument', { message });
  const name = input.name.trim();
  if (!name) throw invalid('give the workspace a name');
  if (name === DEFAULT_WORKSPACE) throw invalid('"Default" exists already and pays from "default"');
  if (Boolean(input.identity) === Boolean(input.newIdentity))
    throw invalid('give exactly one of --identity <name> or --new-identity');
  const identity = input.newIdentity ? identities.create(name).name : input.identity!;
  if (
    !input.newIdentity &&
    identity !== DEFAULT_IDENTITY &&
    !identities.list().some((listing) => listing.name === identity)
  ) {
    throw invalid(
      `no identity named "${identity}"; create it with \`svc buyer identity create ${identity}\``,
    );
  }
  if (await store.findWorkspaceByIdentity(identity))
    throw invalid(`identity "${identity}" already pays for another workspace`);
  if (await store.findWorkspaceByName(name))
    throw invalid(`a workspace named "${name}" exists already`);
  return store.createWorkspace({ id: newId('ws'), name, identity, createdAt: now });
}
