/**
 * What the demo model reads from a request in any of the three formats: the tools offered, the
 * last user turn (text, or the tool results it carries), the working directory a coding tool
 * states, and whether the client asked for caching or reasoning.
 */
import type { ApiProtocol } from '../../network/index.js';

type Json = Record<string, unknown>;

/** A tool the client offered, with its JSON schema (absent for free-form custom tools). */
export interface OfferedTool {
  name: string;
  description: string;
  schema: Json | undefined;
}

export interface Conversation {
  tools: OfferedTool[];
  /** The last user turn's own words (tags such as `<system-reminder>` removed). */
  userText: string;
  /** Outputs of tool calls when the last turn returns them (newest turn only). */
  toolResults: string[];
  /** The directory the coding tool runs in, when its prompt says. */
  cwd: string | undefined;
  /** The client marked part of the prompt for caching (cache_control / prompt_cache_key). */
  cacheMarked: boolean;
  /** The client asked for reasoning (thinking / reasoning settings). */
  reasoning: boolean;
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Text of a content value: a string or an array of parts carrying `text`. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : ''))
    .filter((text) => text.length > 0)
    .join('\n');
}

/** Removes harness blocks (`<system-reminder>…</system-reminder>`, `<environment_context>…`). */
function ownWords(text: string): string {
  return text.replace(/<([a-z_-]+)(?:\s[^>]*)?>[\s\S]*?<\/\1>/gi, ' ').trim();
}

function toolsOf(protocol: ApiProtocol, body: Json): OfferedTool[] {
  if (!Array.isArray(body.tools)) return [];
  const tools: OfferedTool[] = [];
  for (const raw of body.tools.slice(0, 256)) {
    if (!isObject(raw)) continue;
    const fn =
      protocol === 'openai-chat-completions' && isObject(raw.function) ? raw.function : raw;
    if (typeof fn.name !== 'string') continue;
    // Vendor-hosted tools (web search, code execution…) are not the client's to run.
    if (protocol === 'anthropic-messages' && raw.type !== undefined && raw.type !== 'custom')
      continue;
    if (protocol === 'openai-responses' && raw.type !== 'function' && raw.type !== 'custom')
      continue;
    const schema = fn.parameters ?? fn.input_schema;
    tools.push({
      name: fn.name,
      description: typeof fn.description === 'string' ? fn.description : '',
      schema: isObject(schema) ? schema : undefined,
    });
  }
  return tools;
}

/** The turns of the request as (role, content, type) items, oldest first. */
function itemsOf(protocol: ApiProtocol, body: Json): Json[] {
  const source = protocol === 'openai-responses' ? body.input : body.messages;
  if (typeof source === 'string') return [{ role: 'user', content: source }];
  return Array.isArray(source) ? source.filter(isObject) : [];
}

function resultText(output: unknown): string {
  if (typeof output === 'string') return output;
  return textOf(output);
}

/** Tool outputs at the end of the conversation (the turn the model answers now). */
function trailingToolResults(protocol: ApiProtocol, items: Json[]): string[] {
  const results: string[] = [];
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (protocol === 'openai-chat-completions') {
      if (item.role !== 'tool') break;
      results.unshift(textOf(item.content));
    } else if (protocol === 'openai-responses') {
      // Calls and outputs may interleave (call, output, call, output): walk back to the message.
      if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
        results.unshift(resultText(item.output));
      } else if (item.role === 'user' || item.role === 'assistant') break;
    } else {
      if (item.role === 'system') continue;
      if (item.role !== 'user' || !Array.isArray(item.content)) break;
      for (const block of item.content) {
        if (isObject(block) && block.type === 'tool_result')
          results.push(resultText(block.content));
      }
      break;
    }
  }
  return results;
}

function lastUserWords(items: Json[]): string {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.role === 'assistant') return '';
    if (item.role !== 'user') continue;
    const words = ownWords(textOf(item.content));
    if (words) return words;
  }
  return '';
}

/** Every text the client sent (system prompts too), for finding the working directory. */
function allText(body: Json, items: Json[]): string {
  const parts = [
    textOf(body.system),
    typeof body.instructions === 'string' ? body.instructions : '',
  ];
  for (const item of items) parts.push(textOf(item.content));
  return parts.join('\n');
}

function cwdIn(text: string): string | undefined {
  const match =
    /<cwd>\s*(\/[^<\s]*)\s*<\/cwd>/.exec(text) ?? /working directory:\s*(\/[^\s<"'`]+)/i.exec(text);
  return match?.[1];
}

function hasCacheMarker(protocol: ApiProtocol, body: Json): boolean {
  if (typeof body.prompt_cache_key === 'string') return true;
  if (protocol !== 'anthropic-messages') return false;
  if (isObject(body.cache_control)) return true;
  const blocks = [
    ...(Array.isArray(body.system) ? body.system : []),
    ...(Array.isArray(body.tools) ? body.tools : []),
    ...itemsOf(protocol, body).flatMap((item) => (Array.isArray(item.content) ? item.content : [])),
  ];
  return blocks.some((block) => isObject(block) && isObject(block.cache_control));
}

function wantsReasoning(protocol: ApiProtocol, body: Json): boolean {
  if (protocol === 'anthropic-messages') {
    return isObject(body.thinking) && body.thinking.type !== 'disabled';
  }
  if (protocol === 'openai-responses') return isObject(body.reasoning);
  return false;
}

/** Reads a request the demo model answers (bounded: the seller already capped the body size). */
export function readConversation(protocol: ApiProtocol, body: Json): Conversation {
  const items = itemsOf(protocol, body);
  const toolResults = trailingToolResults(protocol, items);
  return {
    tools: toolsOf(protocol, body),
    userText: toolResults.length > 0 ? '' : lastUserWords(items),
    toolResults,
    cwd: cwdIn(allText(body, items).slice(0, 1_000_000)),
    cacheMarked: hasCacheMarker(protocol, body),
    reasoning: wantsReasoning(protocol, body),
  };
}
