/** Messages request -> internal conversation, validating as it goes (400 naming the field). */
import {
  array,
  assign,
  base64Source,
  documentSourceOfDataUrl,
  imageSourceOfUrl,
  invalid,
  isRecord,
  object,
  optBoolean,
  optInteger,
  optNumber,
  optStops,
  optString,
  string,
  unsupported,
} from '../check.js';
import type {
  Conversation,
  ImagePart,
  OutputFormat,
  Part,
  ToolChoice,
  ToolDef,
  UserContent,
} from '../model.js';

const HARMFUL = ['mcp_servers'] as const;

/** Every top-level parameter read here; anything else is reported as dropped. */
const KNOWN = new Set<string>([
  ...[
    'model',
    'messages',
    'system',
    'max_tokens',
    'stop_sequences',
    'temperature',
    'top_p',
    'top_k',
    'tools',
    'tool_choice',
    'metadata',
    'stream',
    'thinking',
    'output_config',
  ],
  ...HARMFUL,
]);

function image(block: Record<string, unknown>, p: string): ImagePart {
  const source = object(block.source, `${p}.source`);
  if (source.type === 'base64') {
    return {
      type: 'image',
      source: base64Source(
        string(source.media_type, `${p}.source.media_type`),
        string(source.data, `${p}.source.data`),
        `${p}.source`,
      ),
    };
  }
  if (source.type === 'url') {
    return {
      type: 'image',
      source: imageSourceOfUrl(string(source.url, `${p}.source.url`), `${p}.source.url`),
    };
  }
  throw unsupported(
    `${p}.source.type`,
    `image source ${JSON.stringify(source.type)} cannot be translated`,
  );
}

function document(block: Record<string, unknown>, p: string): UserContent {
  const source = object(block.source, `${p}.source`);
  let doc: UserContent;
  if (source.type === 'base64') {
    const mediaType = string(source.media_type, `${p}.source.media_type`);
    const data = string(source.data, `${p}.source.data`);
    doc = {
      type: 'document',
      source: documentSourceOfDataUrl(`data:${mediaType};base64,${data}`, `${p}.source.data`),
    };
  } else if (source.type === 'url') {
    doc = { type: 'document', source: { kind: 'url', url: string(source.url, `${p}.source.url`) } };
  } else if (source.type === 'text') {
    doc = {
      type: 'document',
      source: { kind: 'text', text: string(source.data, `${p}.source.data`) },
    };
  } else {
    throw unsupported(
      `${p}.source.type`,
      `document source ${JSON.stringify(source.type)} cannot be translated`,
    );
  }
  assign(doc, 'filename', optString(block.title, `${p}.title`));
  return doc;
}

function resultContent(content: unknown, p: string): UserContent[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return array(content, p).map((raw, k) => {
    const block = object(raw, `${p}[${k}]`);
    if (block.type === 'text') return { type: 'text', text: string(block.text, `${p}[${k}].text`) };
    if (block.type === 'image') return image(block, `${p}[${k}]`);
    if (block.type === 'document') return document(block, `${p}[${k}]`);
    throw unsupported(
      `${p}[${k}].type`,
      `tool result block ${JSON.stringify(block.type)} cannot be translated`,
    );
  });
}

function blocks(
  content: unknown,
  param: string,
  role: 'user' | 'assistant',
  calls: Set<string>,
  previousCalls: Set<string>,
): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return array(content, param).map((raw, j): Part => {
    const p = `${param}[${j}]`;
    const block = object(raw, p);
    switch (block.type) {
      case 'text':
        return { type: 'text', text: string(block.text, `${p}.text`) };
      case 'image':
        if (role !== 'user') throw invalid(`${p}.type`, 'only user messages can hold images');
        return image(block, p);
      case 'tool_use': {
        if (role !== 'assistant')
          throw invalid(`${p}.type`, 'tool_use blocks belong to assistant messages');
        const id = string(block.id, `${p}.id`);
        calls.add(id);
        return {
          type: 'tool_call',
          id,
          name: string(block.name, `${p}.name`),
          arguments: JSON.stringify(block.input ?? {}),
        };
      }
      case 'tool_result': {
        if (role !== 'user')
          throw invalid(`${p}.type`, 'tool_result blocks belong to user messages');
        const callId = string(block.tool_use_id, `${p}.tool_use_id`);
        if (!previousCalls.has(callId)) {
          throw invalid(
            `${p}.tool_use_id`,
            `the previous assistant message has no tool_use with id ${callId}`,
          );
        }
        const out: Part = {
          type: 'tool_result',
          callId,
          content: resultContent(block.content, `${p}.content`),
        };
        if (optBoolean(block.is_error, `${p}.is_error`)) out.isError = true;
        return out;
      }
      case 'thinking': {
        const out: Part = { type: 'reasoning', text: string(block.thinking, `${p}.thinking`) };
        assign(out, 'signature', optString(block.signature, `${p}.signature`));
        return out;
      }
      case 'redacted_thinking':
        return { type: 'reasoning', text: '' };
      case 'document':
        if (role !== 'user') throw invalid(`${p}.type`, 'only user messages can hold documents');
        return document(block, p);
      case 'search_result':
        throw unsupported(`${p}.type`, `content block "${block.type}" cannot be translated`);
      default:
        throw invalid(`${p}.type`, `unknown content block type ${JSON.stringify(block.type)}`);
    }
  });
}

function parseTools(value: unknown, dropped: string[]): ToolDef[] {
  if (value === undefined || value === null) return [];
  return array(value, 'tools').flatMap((raw, i): ToolDef[] => {
    const tool = object(raw, `tools[${i}]`);
    if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') {
      // Server tools run at the vendor: dropping one only narrows what the model may do.
      dropped.push(typeof tool.name === 'string' ? tool.name : `tools[${i}]`);
      return [];
    }
    const def: ToolDef = {
      name: string(tool.name, `tools[${i}].name`),
      parameters: object(tool.input_schema, `tools[${i}].input_schema`),
    };
    assign(def, 'description', optString(tool.description, `tools[${i}].description`));
    assign(def, 'strict', optBoolean(tool.strict, `tools[${i}].strict`));
    return [def];
  });
}

function parseToolChoice(value: unknown, conv: Conversation): void {
  if (value === undefined || value === null) return;
  const choice = object(value, 'tool_choice');
  let tc: ToolChoice;
  if (choice.type === 'auto' || choice.type === 'none') tc = { type: choice.type };
  else if (choice.type === 'any') tc = { type: 'required' };
  else if (choice.type === 'tool')
    tc = { type: 'tool', name: string(choice.name, 'tool_choice.name') };
  else throw invalid('tool_choice.type', `unknown type ${JSON.stringify(choice.type)}`);
  conv.toolChoice = tc;
  if (optBoolean(choice.disable_parallel_tool_use, 'tool_choice.disable_parallel_tool_use')) {
    conv.parallelToolCalls = false;
  }
}

function parseSystem(value: unknown, conv: Conversation): void {
  if (value === undefined || value === null) return;
  if (typeof value === 'string') {
    conv.system.push(value);
    return;
  }
  array(value, 'system').forEach((raw, i) => {
    const block = object(raw, `system[${i}]`);
    if (block.type !== 'text') throw invalid(`system[${i}].type`, 'system blocks must be text');
    conv.system.push(string(block.text, `system[${i}].text`));
  });
}

function parseOutputFormat(value: unknown): OutputFormat | undefined {
  if (!isRecord(value) || value.format === undefined || value.format === null) return undefined;
  const format = object(value.format, 'output_config.format');
  if (format.type !== 'json_schema')
    throw invalid('output_config.format.type', 'must be json_schema');
  return {
    type: 'json_schema',
    name: 'output',
    schema: object(format.schema, 'output_config.format.schema'),
    strict: true,
  };
}

/** Parses and validates a messages request body (max_tokens is required by the format). */
export function parseMessagesRequest(
  body: unknown,
  warnings: string[],
  requireMaxTokens = true,
): Conversation {
  const req = object(body, 'body');
  for (const key of HARMFUL) {
    if (req[key] !== undefined && req[key] !== null)
      throw unsupported(key, `${key} cannot be translated`);
  }
  for (const key of Object.keys(req)) {
    if (req[key] !== undefined && req[key] !== null && !KNOWN.has(key))
      warnings.push(`${key} dropped`);
  }
  const droppedTools: string[] = [];
  const conv: Conversation = {
    model: string(req.model, 'model'),
    system: [],
    turns: [],
    tools: parseTools(req.tools, droppedTools),
    stream: optBoolean(req.stream, 'stream') ?? false,
  };
  parseSystem(req.system, conv);
  const messages = array(req.messages, 'messages');
  if (messages.length === 0) throw invalid('messages', 'must not be empty');
  let previousCalls = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const param = `messages[${i}]`;
    const msg = object(messages[i], param);
    const role = msg.role;
    if (role === 'system') {
      // Newer API versions accept system messages in the list; they join the system prompt.
      const content = msg.content;
      conv.system.push(
        typeof content === 'string'
          ? content
          : blocks(content, `${param}.content`, 'user', new Set(), new Set())
              .map((p) => (p.type === 'text' ? p.text : ''))
              .join(''),
      );
      continue;
    }
    if (role !== 'user' && role !== 'assistant')
      throw invalid(`${param}.role`, `must be user or assistant, got ${JSON.stringify(role)}`);
    const calls = new Set<string>();
    const parts = blocks(msg.content, `${param}.content`, role, calls, previousCalls);
    previousCalls = role === 'assistant' ? calls : new Set();
    const last = conv.turns.at(-1);
    if (last && last.role === role) last.parts.push(...parts);
    else conv.turns.push({ role, parts });
  }
  const maxTokens = optInteger(req.max_tokens, 'max_tokens');
  if (maxTokens === undefined && requireMaxTokens) throw invalid('max_tokens', 'is required');
  assign(conv, 'maxOutputTokens', maxTokens);
  assign(conv, 'temperature', optNumber(req.temperature, 'temperature'));
  assign(conv, 'topP', optNumber(req.top_p, 'top_p'));
  assign(conv, 'topK', optInteger(req.top_k, 'top_k', 0));
  assign(conv, 'stop', optStops(req.stop_sequences, 'stop_sequences'));
  parseToolChoice(req.tool_choice, conv);
  assign(conv, 'outputFormat', parseOutputFormat(req.output_config));
  if (isRecord(req.thinking)) {
    const t = req.thinking;
    if (t.type === 'enabled') {
      conv.reasoning = {
        enabled: true,
        budgetTokens: optInteger(t.budget_tokens, 'thinking.budget_tokens') ?? 1024,
      };
    } else if (t.type === 'adaptive') conv.reasoning = { enabled: true, effort: 'medium' };
    else if (t.type !== 'disabled')
      throw invalid('thinking.type', `unknown type ${JSON.stringify(t.type)}`);
  }
  if (isRecord(req.output_config)) {
    const effort = req.output_config.effort;
    if (effort === 'low' || effort === 'medium' || effort === 'high') {
      conv.reasoning = { ...(conv.reasoning ?? { enabled: true }), effort };
    } else if (effort === 'xhigh' || effort === 'max') {
      conv.reasoning = { ...(conv.reasoning ?? { enabled: true }), effort: 'high' };
    }
  }
  if (isRecord(req.metadata))
    assign(conv, 'user', optString(req.metadata.user_id, 'metadata.user_id'));
  for (const name of droppedTools)
    warnings.push(`tool ${name} dropped (built-in tools cannot be carried)`);
  if (conv.toolChoice?.type === 'tool' && droppedTools.includes(conv.toolChoice.name)) {
    throw unsupported('tool_choice', `the forced tool ${conv.toolChoice.name} is a built-in tool`);
  }
  return conv;
}
