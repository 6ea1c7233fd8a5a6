/**
 * Bearer authentication: the key, its member and workspace are read from the store on every
 * request, in one query (no caching: changes from other processes apply at once).
 */
import { SvcError } from '../../errors/index.js';
import { keyState } from '../keys/keyState.js';
import { hashesEqual, hashSecret, parseBearer } from '../keys/secrets.js';
import type { GatewayStore, KeyRecord, MemberCore, WorkspaceRecord } from '../store/types.js';

export interface Caller {
  key: KeyRecord;
  member: MemberCore | null;
  workspace: WorkspaceRecord;
}

/** Says what was wrong with the credentials a request carried, and how to send them. */
function missingKeyMessage(authorization: string | undefined, apiKeyHeader?: string): string {
  const how = 'send Authorization: Bearer svc_...';
  if (authorization === undefined) {
    // Anthropic-style clients send x-api-key; the gateway reads the bearer token only.
    return apiKeyHeader
      ? `The key must be sent as a bearer token, not in x-api-key: ${how} (Anthropic SDKs: authToken, or ANTHROPIC_AUTH_TOKEN for Claude Code).`
      : `A valid API key is required: ${how}`;
  }
  if (!/^Bearer\s+\S+\s*$/i.test(authorization)) {
    return `The Authorization header is malformed: ${how}`;
  }
  return `That bearer token is not an svc API key (svc_ followed by 43 characters): ${how}`;
}

/** Resolves the caller of a request or throws a 401 SvcError (store failures become 503). */
export async function authenticate(
  store: GatewayStore,
  authorization: string | undefined,
  now: number,
  apiKeyHeader?: string,
): Promise<Caller> {
  const secret = parseBearer(authorization);
  if (!secret)
    throw new SvcError('unauthorized', { message: missingKeyMessage(authorization, apiKeyHeader) });
  const hash = hashSecret(secret);
  const found = await storeCall(() => store.findCaller(hash));
  if (!found || !hashesEqual(found.key.secretHash, hash)) {
    throw new SvcError('unauthorized', { message: 'This API key is not known to this gateway.' });
  }
  const { key, member, workspace } = found;
  const state = keyState(key, now);
  if (state === 'revoked') throw new SvcError('key_revoked');
  if (state === 'expired') throw new SvcError('key_expired');
  if (member?.disabled) {
    throw new SvcError('unauthorized', { message: "This API key's member has been disabled." });
  }
  if (!workspace)
    throw new SvcError('unauthorized', { message: "This API key's workspace is gone." });
  return { key, member, workspace };
}

/** Runs a store call; any failure becomes 503 store_unavailable. */
export async function storeCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new SvcError('store_unavailable', { cause: error });
  }
}
