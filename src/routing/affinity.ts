/**
 * Conversation affinity: later turns of a recognised conversation prefer the seller that served
 * earlier turns (a preference, not a pin). The key is a client session id when the client sends
 * one (Claude Code's `metadata.user_id` carries its session; Codex sends `session_id` /
 * `conversation_id` headers), else a hash of the system prompt and the first user turn.
 */
import { hash } from 'node:crypto';
import type { PeerId } from '../identity/index.js';

const SESSION_HEADERS = [
  'session_id',
  'session-id',
  'x-session-id',
  'conversation_id',
  'x-claude-code-session-id',
];

function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(textOf).join('\n');
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    if (typeof record.text === 'string') return record.text;
    if ('content' in record) return textOf(record.content);
  }
  return '';
}

/** A stable conversation key for a request body and its headers; undefined when there is nothing to key on. */
export function conversationKey(
  body: Record<string, unknown>,
  headers: Record<string, string | string[] | undefined>,
): string | undefined {
  for (const name of SESSION_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string' && value.length > 0) return `h:${value}`;
  }
  const metadata = body.metadata as Record<string, unknown> | undefined;
  if (metadata && typeof metadata.user_id === 'string' && metadata.user_id.length > 0) {
    return `m:${metadata.user_id}`;
  }
  if (typeof body.prompt_cache_key === 'string') return `p:${body.prompt_cache_key}`;
  if (typeof body.previous_response_id === 'string') return undefined;
  const turns = Array.isArray(body.messages)
    ? body.messages
    : Array.isArray(body.input)
      ? body.input
      : typeof body.input === 'string'
        ? [{ role: 'user', content: body.input }]
        : [];
  let system = textOf(body.system) + textOf(body.instructions);
  let firstUser = '';
  for (const turn of turns as Array<Record<string, unknown>>) {
    if (turn?.role === 'system' || turn?.role === 'developer') system += textOf(turn.content);
    else if (turn?.role === 'user') {
      firstUser = textOf(turn.content);
      break;
    }
  }
  if (!firstUser) return undefined;
  // One-shot hash: no Hash object per request (the same digest as updating with each part).
  return `c:${hash('sha256', `${system}\u0000${firstUser}`, 'base64url').slice(0, 22)}`;
}

/** Remembers which seller served a conversation (bounded, oldest forgotten first). */
export class AffinityStore {
  private readonly entries = new Map<string, PeerId>();

  constructor(private readonly capacity = 10_000) {}

  get(key: string): PeerId | undefined {
    return this.entries.get(key);
  }

  remember(key: string, peerId: PeerId): void {
    this.entries.delete(key);
    this.entries.set(key, peerId);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }
}
