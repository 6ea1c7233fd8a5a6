/**
 * Console sessions (docs/decisions/135-console-sign-in.md): a key is exchanged once for a session
 * cookie; members and the operator sign in through one-time links printed by the CLI. Every
 * request re-reads the key or member, so a revoked key or a disabled member ends its session.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { SvcError } from '../../../errors/index.js';
import { keyState } from '../../keys/keyState.js';
import { hashSecret, parseBearer } from '../../keys/secrets.js';
import type { ConsoleSession } from '../../store/sql/console.js';
import type { GatewayStore, KeyRecord, MemberRecord } from '../../store/types.js';
import type { ConsoleDeps } from './deps.js';
import { sessionCookie } from './http.js';

export const KEY_SESSION_MS = 12 * 3_600_000;
export const MEMBER_SESSION_MS = 8 * 3_600_000;
export const LOGIN_LINK_MS = 5 * 60_000;

/** Who is looking: a key (read-only), an admin (everything) or a member (own workspaces). */
export type Viewer =
  | { kind: 'key'; session: ConsoleSession; key: KeyRecord }
  | { kind: 'admin'; session: ConsoleSession; actor: string; member: MemberRecord | null }
  | { kind: 'member'; session: ConsoleSession; actor: string; member: MemberRecord };

/** Session ids and link tokens are stored as SHA-256, like key secrets. */
const hashToken = hashSecret;

function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** A new session row for a subject; returns the cookie value (only its hash is stored). */
export async function openSession(
  store: GatewayStore,
  kind: ConsoleSession['kind'],
  subjectId: string,
  now: number,
): Promise<{ cookie: string; maxAgeSeconds: number }> {
  const cookie = newToken();
  const lifetime = kind === 'key' ? KEY_SESSION_MS : MEMBER_SESSION_MS;
  const tables = store.consoleTables();
  await tables.pruneExpired(now);
  await tables.createSession({
    idHash: hashToken(cookie),
    kind,
    subjectId,
    csrfToken: newToken(),
    createdAt: now,
    expiresAt: now + lifetime,
  });
  return { cookie, maxAgeSeconds: lifetime / 1000 };
}

/** Exchanges a pasted key for a session; a wrong, revoked or expired key is refused with 401. */
export async function signInWithKey(deps: ConsoleDeps, pasted: unknown) {
  const secret = typeof pasted === 'string' ? parseBearer(`Bearer ${pasted.trim()}`) : null;
  if (!secret) throw new SvcError('unauthorized', { message: 'Paste an svc_ API key.' });
  const key = await deps.store.findKeyBySecretHash(hashSecret(secret));
  if (!key) throw new SvcError('unauthorized', { message: 'This API key is not known here.' });
  const state = keyState(key, deps.now());
  if (state === 'revoked') throw new SvcError('key_revoked');
  if (state === 'expired') throw new SvcError('key_expired');
  return openSession(deps.store, 'key', key.id, deps.now());
}

/** Creates a one-time sign-in link token for a member (by name) or, with null, the operator. */
export async function createLoginLink(
  store: GatewayStore,
  memberName: string | null,
  now: number,
): Promise<{ token: string; expiresAt: number; subject: string }> {
  let subjectId = '';
  if (memberName !== null) {
    const member = await store.findMemberByName(memberName);
    if (!member)
      throw new SvcError('invalid_argument', { message: `no member named "${memberName}"` });
    if (member.disabled) {
      throw new SvcError('invalid_argument', { message: `member "${memberName}" is disabled` });
    }
    subjectId = member.id;
  }
  const token = newToken();
  const expiresAt = now + LOGIN_LINK_MS;
  await store
    .consoleTables()
    .createLoginLink({ tokenHash: hashToken(token), subjectId, createdAt: now, expiresAt });
  return { token, expiresAt, subject: memberName ?? 'operator' };
}

/** Uses a sign-in link; returns the new session, or null when the link is unknown/used/expired. */
export async function signInWithLink(deps: ConsoleDeps, token: string) {
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return null;
  const subjectId = await deps.store.consoleTables().consumeLoginLink(hashToken(token), deps.now());
  if (subjectId === null) return null;
  return openSession(deps.store, subjectId === '' ? 'operator' : 'member', subjectId, deps.now());
}

/** The viewer of a request, or a 401 when it has no live session (ending a stale one). */
export async function viewerOf(deps: ConsoleDeps, req: IncomingMessage): Promise<Viewer> {
  const cookie = sessionCookie(req);
  if (!cookie || cookie.length > 100) throw new SvcError('console_sign_in_required');
  const tables = deps.store.consoleTables();
  const idHash = hashToken(cookie);
  const session = await tables.getSession(idHash, deps.now());
  if (!session) throw new SvcError('console_sign_in_required');
  const end = async (): Promise<never> => {
    await tables.deleteSession(idHash);
    throw new SvcError('console_sign_in_required');
  };
  if (session.kind === 'key') {
    const key = await deps.store.getKey(session.subjectId);
    if (!key || keyState(key, deps.now()) !== 'active') return end();
    return { kind: 'key', session, key };
  }
  if (session.kind === 'operator')
    return { kind: 'admin', session, actor: 'operator', member: null };
  const member = await deps.store.getMember(session.subjectId);
  if (!member || member.disabled) return end();
  const actor = `member:${member.name}`;
  return member.orgRole === 'none'
    ? { kind: 'member', session, actor, member }
    : { kind: 'admin', session, actor, member };
}

/** Refuses a mutation whose x-csrf-token is not the session's, or that comes from another origin. */
export function checkCsrf(req: IncomingMessage, session: ConsoleSession | null): void {
  checkOrigin(req);
  if (!session) return;
  const sent = req.headers['x-csrf-token'];
  const given = Buffer.from(typeof sent === 'string' ? sent : '');
  const expected = Buffer.from(session.csrfToken);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new SvcError('csrf_invalid');
  }
}

/** Browsers send Origin on every POST; one that is not this host is another site's form. */
function checkOrigin(req: IncomingMessage): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    throw new SvcError('csrf_invalid');
  }
  if (host !== req.headers.host) throw new SvcError('csrf_invalid');
}

/** What the page may show about the session (the CSRF token travels in JSON, never in HTML). */
export function sessionSummary(viewer: Viewer) {
  return {
    kind: viewer.kind,
    name: viewer.kind === 'key' ? viewer.key.label : (viewer.member?.name ?? 'operator'),
    csrfToken: viewer.session.csrfToken,
    expiresAt: new Date(viewer.session.expiresAt).toISOString(),
  };
}
