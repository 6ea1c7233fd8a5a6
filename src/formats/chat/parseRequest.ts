/** Chat-completions request -> internal conversation, validating as it goes (400 naming the field). */
import {
  array,
  assign,
  documentSourceOfDataUrl,
  imageSourceOfUrl,
  invalid,
  isRecord,
  object,
  optBoolean,
  optInteger,
  optMetadata,
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
  ReasoningEffort,
  ToolChoice,
  ToolDef,
  UserContent,
} from '../model.js';

/** Parameters whose loss would change the answer. */
const HARMFUL = [
  'audio',
  'modalities',
  'web_search_options',
  'functions',
  'function_call',
] as const;

/** Every top-level parameter read here; anything else is reported as dropped. */
const KNOWN = new Set<string>([
  ...[
    'model',
    'messages',
    'tools',
    'tool_choice',
    'parallel_tool_calls',
    'max_tokens',
    'max_completion_tokens',
    'temperature',
    'top_p',
    'seed',
    'stop',
    'response_format',
    'reasoning_effort',
    'user',
    'metadata',
    'stream',
    'stream_options',
    'n',
  ],
  ...HARMFUL,
]);

function userParts(content: unknown, param: string): UserContent[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return array(content, param).map((raw, j): UserContent => {
    const p = `${param}[${j}]`;
    const part = object(raw, p);
    if (part.type === 'text') return { type: 'text', text: string(part.text, `${p}.text`) };
    if (part.type === 'image_url') {
      const image = object(part.image_url, `${p}.image_url`);
      const url = string(image.url, `${p}.image_url.url`);
      const out: ImagePart = { type: 'image', source: imageSourceOfUrl(url, `${p}.image_url.url`) };
      const detail = image.detail;
      if (detail === 'low' || detail === 'high') out.detail = detail;
      return out;
    }
    if (part.type === 'file') {
      const file = object(part.file, `${p}.file`);
      const data = optString(file.file_data, `${p}.file.file_data`);
      if (data === undefined)
        throw unsupported(`${p}.file.file_id`, 'files by id cannot be translated');
      const doc: UserContent = {
        type: 'document',
        source: documentSourceOfDataUrl(data, `${p}.file.file_data`),
      };
      assign(doc, 'filename', optString(file.filename, `${p}.file.filename`));
      return doc;
    }
    if (part.type === 'input_audio') {
      throw unsupported(`${p}.type`, `content part "${part.type}" cannot be translated`);
    }
    throw invalid(`${p}.type`, `unknown content part type ${JSON.stringify(part.type)}`);
  });
}

function textOf(content: unknown, param: string): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return array(content, param)
    .map((raw, j) => {
      const part = object(raw, `${param}[${j}]`);
      if (part.type === 'text') return string(part.text, `${param}[${j}].text`);
      if (part.type === 'refusal') return string(part.refusal, `${param}[${j}].refusal`);
      throw invalid(`${param}[${j}].type`, 'only text parts are allowed here');
    })
    .join('');
}

function parseTools(value: unknown, dropped: string[]): ToolDef[] {
  if (value === undefined || value === null) return [];
  return array(value, 'tools').flatMap((raw, i): ToolDef[] => {
    const tool = object(raw, `tools[${i}]`);
    if (tool.type !== 'function') {
      // Built-in tools run at the vendor: dropping one only narrows what the model may do.
      dropped.push(typeof tool.name === 'string' ? tool.name : String(tool.type));
      return [];
    }
    const fn = object(tool.function, `tools[${i}].function`);
    const def: ToolDef = {
      name: string(fn.name, `tools[${i}].function.name`),
      parameters:
        fn.parameters === undefined
          ? { type: 'object', properties: {} }
          : object(fn.parameters, `tools[${i}].function.parameters`),
    };
    const description = optString(fn.description, `tools[${i}].function.description`);
    if (description !== undefined) def.description = description;
    const strict = optBoolean(fn.strict, `tools[${i}].function.strict`);
    if (strict !== undefined) def.strict = strict;
    return [def];
  });
}

function parseToolChoice(value: unknown): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === 'auto' || value === 'none' || value === 'required') return { type: value };
  const choice = object(value, 'tool_choice');
  if (choice.type === 'function') {
    const fn = object(choice.function, 'tool_choice.function');
    return { type: 'tool', name: string(fn.name, 'tool_choice.function.name') };
  }
  throw unsupported('tool_choice', `tool_choice ${JSON.stringify(value)}`);
}

function parseResponseFormat(value: unknown): OutputFormat | undefined {
  if (value === undefined || value === null) return undefined;
  const format = object(value, 'response_format');
  if (format.type === 'text' || format.type === 'json_object') return { type: format.type };
  if (format.type === 'json_schema') {
    const js = object(format.json_schema, 'response_format.json_schema');
    const out: OutputFormat = {
      type: 'json_schema',
      name: string(js.name, 'response_format.json_schema.name'),
      schema:
        js.schema === undefined ? {} : object(js.schema, 'response_format.json_schema.schema'),
    };
    const strict = optBoolean(js.strict, 'response_format.json_schema.strict');
    if (strict !== undefined) out.strict = strict;
    const description = optString(js.description, 'response_format.json_schema.description');
    if (description !== undefined) out.description = description;
    return out;
  }
  throw invalid('response_format.type', `unknown type ${JSON.stringify(format.type)}`);
}

function effortOf(value: unknown, param: string): ReasoningEffort | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === 'minimal' || value === 'low' || value === 'medium' || value === 'high')
    return value;
  if (value === 'none') return undefined;
  if (value === 'xhigh') return 'high';
  throw invalid(param, 'must be minimal, low, medium or high');
}

/** Parses and validates a chat-completions request body. */
export function parseChatRequest(body: unknown, warnings: string[]): Conversation {
  const req = object(body, 'body');
  const droppedTools: string[] = [];
  const conv: Conversation = {
    model: string(req.model, 'model'),
    system: [],
    turns: [],
    tools: parseTools(req.tools, droppedTools),
    stream: optBoolean(req.stream, 'stream') ?? false,
  };
  for (const key of HARMFUL) {
    if (req[key] !== undefined && req[key] !== null) {
      throw unsupported(key, `${key} cannot be carried to the seller's API format`);
    }
  }
  for (const key of Object.keys(req)) {
    if (req[key] !== undefined && req[key] !== null && !KNOWN.has(key))
      warnings.push(`${key} dropped`);
  }
  const n = optInteger(req.n, 'n');
  if (n !== undefined && n !== 1) throw unsupported('n', 'only n=1 can be translated');

  const messages = array(req.messages, 'messages');
  if (messages.length === 0) throw invalid('messages', 'must not be empty');
  const knownCalls = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const param = `messages[${i}]`;
    const msg = object(messages[i], param);
    const role = msg.role;
    if (role === 'system' || role === 'developer') {
      // A system message of several text parts keeps them apart (they map to system blocks).
      const content = msg.content;
      if (Array.isArray(content)) {
        content.forEach((part, j) => {
          conv.system.push(textOf([part], `${param}.content[${j}]`));
        });
      } else conv.system.push(textOf(content, `${param}.content`));
    } else if (role === 'user') {
      pushTurn(conv, 'user', userParts(msg.content, `${param}.content`));
    } else if (role === 'assistant') {
      const parts: Part[] = [];
      const reasoning = msg.reasoning_content ?? msg.reasoning;
      if (typeof reasoning === 'string' && reasoning.length > 0) {
        parts.push({ type: 'reasoning', text: reasoning });
      }
      const text = textOf(msg.content, `${param}.content`);
      if (text.length > 0) parts.push({ type: 'text', text });
      if (msg.tool_calls !== undefined && msg.tool_calls !== null) {
        array(msg.tool_calls, `${param}.tool_calls`).forEach((raw, j) => {
          const p = `${param}.tool_calls[${j}]`;
          const call = object(raw, p);
          const fn = object(call.function, `${p}.function`);
          const id = string(call.id, `${p}.id`);
          knownCalls.add(id);
          parts.push({
            type: 'tool_call',
            id,
            name: string(fn.name, `${p}.function.name`),
            arguments: string(fn.arguments, `${p}.function.arguments`),
          });
        });
      }
      pushTurn(conv, 'assistant', parts);
    } else if (role === 'tool') {
      const callId = string(msg.tool_call_id, `${param}.tool_call_id`);
      if (!knownCalls.has(callId)) {
        throw invalid(`${param}.tool_call_id`, `no earlier assistant tool call has id ${callId}`);
      }
      const text = textOf(msg.content, `${param}.content`);
      pushTurn(conv, 'user', [{ type: 'tool_result', callId, content: [{ type: 'text', text }] }]);
    } else {
      throw invalid(`${param}.role`, `unknown role ${JSON.stringify(role)}`);
    }
  }
  if (conv.turns.length === 0) throw invalid('messages', 'must contain a user message');

  const toolChoice = parseToolChoice(req.tool_choice);
  if (toolChoice) conv.toolChoice = toolChoice;
  const parallel = optBoolean(req.parallel_tool_calls, 'parallel_tool_calls');
  if (parallel !== undefined) conv.parallelToolCalls = parallel;
  const maxTokens =
    optInteger(req.max_completion_tokens, 'max_completion_tokens') ??
    optInteger(req.max_tokens, 'max_tokens');
  if (maxTokens !== undefined) conv.maxOutputTokens = maxTokens;
  assign(conv, 'temperature', optNumber(req.temperature, 'temperature'));
  assign(conv, 'topP', optNumber(req.top_p, 'top_p'));
  assign(conv, 'seed', optNumber(req.seed, 'seed'));
  assign(conv, 'stop', optStops(req.stop, 'stop'));
  assign(conv, 'outputFormat', parseResponseFormat(req.response_format));
  const effort = effortOf(req.reasoning_effort, 'reasoning_effort');
  if (effort) conv.reasoning = { enabled: true, effort };
  assign(conv, 'user', optString(req.user, 'user'));
  assign(conv, 'metadata', optMetadata(req.metadata, 'metadata'));
  if (isRecord(req.stream_options)) {
    assign(
      conv,
      'includeUsage',
      optBoolean(req.stream_options.include_usage, 'stream_options.include_usage'),
    );
  }
  for (const name of droppedTools)
    warnings.push(`tool ${name} dropped (built-in tools cannot be carried)`);
  if (conv.toolChoice?.type === 'tool' && droppedTools.includes(conv.toolChoice.name)) {
    throw unsupported('tool_choice', `the forced tool ${conv.toolChoice.name} is a built-in tool`);
  }
  return conv;
}

function pushTurn(conv: Conversation, role: 'user' | 'assistant', parts: Part[]): void {
  const last = conv.turns.at(-1);
  // Consecutive same-role messages merge (tool messages followed by a user message become one turn).
  if (last && last.role === role) last.parts.push(...parts);
  else conv.turns.push({ role, parts });
}
