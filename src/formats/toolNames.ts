/**
 * Tool names every format accepts: OpenAI allows `^[a-zA-Z0-9_-]{1,64}$`, so longer names (long
 * MCP tool names from Claude Code) or other characters are renamed for the seller and renamed back
 * in its answer through `TranslateContext.toolNames`.
 */
import { createHash } from 'node:crypto';
import type { Conversation, ModelResponse } from './model.js';
import type { StreamPart } from './stream/parts.js';

const VALID = /^[a-zA-Z0-9_-]{1,64}$/;

function safeName(name: string, taken: Set<string>): string {
  let base = name.replace(/[^a-zA-Z0-9_-]/g, '_') || 'tool';
  if (base.length > 64 || taken.has(base)) {
    const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
    base = `${base.slice(0, 55)}_${hash}`;
  }
  return base;
}

/**
 * Renames tools whose names a target may refuse, in place; returns seller name -> client name
 * for the renamed ones (undefined when none was renamed).
 */
export function renameToolsForSeller(conv: Conversation): Record<string, string> | undefined {
  const names = new Set<string>(conv.tools.map((t) => t.name));
  for (const turn of conv.turns)
    for (const p of turn.parts) if (p.type === 'tool_call') names.add(p.name);
  if (conv.toolChoice?.type === 'tool') names.add(conv.toolChoice.name);
  const bad = [...names].filter((n) => !VALID.test(n));
  if (bad.length === 0) return undefined;
  const taken = new Set([...names].filter((n) => VALID.test(n)));
  const forward = new Map<string, string>();
  const back: Record<string, string> = {};
  for (const name of bad) {
    const safe = safeName(name, taken);
    taken.add(safe);
    forward.set(name, safe);
    back[safe] = name;
  }
  const rename = (n: string) => forward.get(n) ?? n;
  for (const tool of conv.tools) tool.name = rename(tool.name);
  for (const turn of conv.turns)
    for (const p of turn.parts) if (p.type === 'tool_call') p.name = rename(p.name);
  if (conv.toolChoice?.type === 'tool')
    conv.toolChoice = { type: 'tool', name: rename(conv.toolChoice.name) };
  return back;
}

/** Restores client tool names in an answer. */
export function restoreToolNames(
  resp: ModelResponse,
  toolNames: Record<string, string> | undefined,
): ModelResponse {
  if (!toolNames) return resp;
  for (const p of resp.parts) if (p.type === 'tool_call') p.name = toolNames[p.name] ?? p.name;
  return resp;
}

/** Restores a client tool name in a stream part. */
export function restoreToolName(
  part: StreamPart,
  toolNames: Record<string, string> | undefined,
): StreamPart {
  if (!toolNames || part.type !== 'block_start' || part.name === undefined) return part;
  const name = toolNames[part.name];
  return name === undefined ? part : { ...part, name };
}
