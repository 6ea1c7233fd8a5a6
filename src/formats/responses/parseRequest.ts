/** Responses request -> internal conversation, validating as it goes (400 naming the field). */
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

const HARMFUL = ['previous_response_id', 'conversation', 'prompt', 'background'] as const;

/** Every top-level parameter read here; anything else is reported as dropped. */
const KNOWN = new Set<string>([
  ...[
    'model',
    'input',
    'instructions',
    'tools',
    'tool_choice',
    'parallel_tool_calls',
    'max_output_tokens',
    'temperature',
    'top_p',
    'text',
    'reasoning',
    'user',
    'metadata',
    'stream',
  ],
  ...HARMFUL,
]);

function contentParts(content: unknown, param: string, role: string): UserContent[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return array(content, param).map((raw, j): UserContent => {
    const p = `${param}[${j}]`;
    const part = object(raw, p);
    switch (part.type) {
      case 'input_text':
      case 'output_text':
        return { type: 'text', text: string(part.text, `${p}.text`) };
      case 'refusal':
        return { type: 'text', text: string(part.refusal, `${p}.refusal`) };
      case 'input_image': {
        if (role === 'assistant')
          throw invalid(`${p}.type`, 'assistant messages cannot hold images');
        if (part.image_url === undefined || part.image_url === null) {
          throw unsupported(`${p}.file_id`, 'images by file id cannot be translated');
        }
        const url = string(part.image_url, `${p}.image_url`);
        const out: ImagePart = { type: 'image', source: imageSourceOfUrl(url, `${p}.image_url`) };
        if (part.detail === 'low' || part.detail === 'high') out.detail = part.detail;
        return out;
      }
      case 'input_file': {
        const filename = optString(part.filename, `${p}.filename`);
        let doc: UserContent;
        if (typeof part.file_data === 'string') {
          // file_data is a data URL; bare base64 is taken as a PDF.
          const url = part.file_data.startsWith('data:')
            ? part.file_data
            : `data:application/pdf;base64,${part.file_data}`;
          doc = { type: 'document', source: documentSourceOfDataUrl(url, `${p}.file_data`) };
        } else if (typeof part.file_url === 'string') {
          doc = { type: 'document', source: { kind: 'url', url: part.file_url } };
        } else throw unsupported(`${p}.file_id`, 'files by id cannot be translated');
        if (filename !== undefined) doc.filename = filename;
        return doc;
      }
      case 'input_audio':
        throw unsupported(`${p}.type`, `content part "${part.type}" cannot be translated`);
      default:
        throw invalid(`${p}.type`, `unknown content part type ${JSON.stringify(part.type)}`);
    }
  });
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
    const def: ToolDef = {
      name: string(tool.name, `tools[${i}].name`),
      parameters:
        tool.parameters === undefined || tool.parameters === null
          ? { type: 'object', properties: {} }
          : object(tool.parameters, `tools[${i}].parameters`),
    };
    assign(def, 'description', optString(tool.description, `tools[${i}].description`));
    assign(def, 'strict', optBoolean(tool.strict, `tools[${i}].strict`));
    return [def];
  });
}

function parseToolChoice(value: unknown): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === 'auto' || value === 'none' || value === 'required') return { type: value };
  const choice = object(value, 'tool_choice');
  if (choice.type === 'function')
    return { type: 'tool', name: string(choice.name, 'tool_choice.name') };
  throw unsupported('tool_choice', `tool_choice ${JSON.stringify(value)}`);
}

function parseTextFormat(value: unknown): OutputFormat | undefined {
  if (value === undefined || value === null) return undefined;
  const text = object(value, 'text');
  if (text.format === undefined || text.format === null) return undefined;
  const format = object(text.format, 'text.format');
  if (format.type === 'text' || format.type === 'json_object') return { type: format.type };
  if (format.type === 'json_schema') {
    const out: OutputFormat = {
      type: 'json_schema',
      name: string(format.name, 'text.format.name'),
      schema: object(format.schema, 'text.format.schema'),
    };
    assign(out, 'strict', optBoolean(format.strict, 'text.format.strict'));
    assign(out, 'description', optString(format.description, 'text.format.description'));
    return out;
  }
  throw invalid('text.format.type', `unknown type ${JSON.stringify(format.type)}`);
}

function pushTurn(conv: Conversation, role: 'user' | 'assistant', parts: Part[]): void {
  const last = conv.turns.at(-1);
  if (last && last.role === role) last.parts.push(...parts);
  else conv.turns.push({ role, parts });
}

/** Parses and validates a responses request body. */
export function parseResponsesRequest(body: unknown, warnings: string[]): Conversation {
  const req = object(body, 'body');
  for (const key of HARMFUL) {
    if (req[key] !== undefined && req[key] !== null) {
      throw unsupported(key, `${key} needs server-side state the seller's format does not have`);
    }
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
  const instructions = optString(req.instructions, 'instructions');
  if (instructions !== undefined) conv.system.push(instructions);

  if (typeof req.input === 'string') {
    pushTurn(conv, 'user', [{ type: 'text', text: req.input }]);
  } else {
    const items = array(req.input, 'input');
    const knownCalls = new Set<string>();
    for (let i = 0; i < items.length; i++) {
      const param = `input[${i}]`;
      const item = object(items[i], param);
      const type = item.type ?? 'message';
      if (type === 'message') {
        const role = item.role;
        if (role === 'system' || role === 'developer') {
          conv.system.push(
            contentParts(item.content, `${param}.content`, 'system')
              .map((p) => (p.type === 'text' ? p.text : ''))
              .join(''),
          );
        } else if (role === 'user' || role === 'assistant') {
          pushTurn(conv, role, contentParts(item.content, `${param}.content`, role));
        } else {
          throw invalid(`${param}.role`, `unknown role ${JSON.stringify(role)}`);
        }
      } else if (type === 'function_call') {
        const callId = string(item.call_id, `${param}.call_id`);
        knownCalls.add(callId);
        pushTurn(conv, 'assistant', [
          {
            type: 'tool_call',
            id: callId,
            name: string(item.name, `${param}.name`),
            arguments: string(item.arguments, `${param}.arguments`),
          },
        ]);
      } else if (type === 'function_call_output') {
        const callId = string(item.call_id, `${param}.call_id`);
        if (!knownCalls.has(callId)) {
          throw invalid(`${param}.call_id`, `no earlier function_call has call_id ${callId}`);
        }
        const content =
          typeof item.output === 'string'
            ? [{ type: 'text' as const, text: item.output }]
            : contentParts(item.output, `${param}.output`, 'tool');
        pushTurn(conv, 'user', [{ type: 'tool_result', callId, content }]);
      } else if (type === 'reasoning') {
        const summary = Array.isArray(item.summary) ? item.summary : [];
        const text = summary
          .map((s) => (isRecord(s) && typeof s.text === 'string' ? s.text : ''))
          .join('\n');
        if (text) pushTurn(conv, 'assistant', [{ type: 'reasoning', text }]);
      } else {
        throw unsupported(
          `${param}.type`,
          `input item type ${JSON.stringify(type)} cannot be translated`,
        );
      }
    }
  }
  if (conv.turns.length === 0) throw invalid('input', 'must contain a user message');

  assign(conv, 'toolChoice', parseToolChoice(req.tool_choice));
  assign(conv, 'parallelToolCalls', optBoolean(req.parallel_tool_calls, 'parallel_tool_calls'));
  assign(conv, 'maxOutputTokens', optInteger(req.max_output_tokens, 'max_output_tokens'));
  assign(conv, 'temperature', optNumber(req.temperature, 'temperature'));
  assign(conv, 'topP', optNumber(req.top_p, 'top_p'));
  assign(conv, 'outputFormat', parseTextFormat(req.text));
  if (isRecord(req.reasoning)) {
    const effort = req.reasoning.effort;
    if (effort === 'minimal' || effort === 'low' || effort === 'medium' || effort === 'high') {
      conv.reasoning = { enabled: true, effort: effort as ReasoningEffort };
    } else if (effort === 'xhigh') conv.reasoning = { enabled: true, effort: 'high' };
    else if (req.reasoning.summary !== undefined && req.reasoning.summary !== null) {
      conv.reasoning = { enabled: true };
    }
  }
  assign(conv, 'user', optString(req.user, 'user'));
  assign(conv, 'metadata', optMetadata(req.metadata, 'metadata'));
  for (const name of droppedTools)
    warnings.push(`tool ${name} dropped (built-in tools cannot be carried)`);
  if (conv.toolChoice?.type === 'tool' && droppedTools.includes(conv.toolChoice.name)) {
    throw unsupported('tool_choice', `the forced tool ${conv.toolChoice.name} is a built-in tool`);
  }
  return conv;
}
