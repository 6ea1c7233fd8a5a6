/**
 * What a vendor's model answers when the request asks for structured output (chat
 * `response_format`, responses `text.format`, messages `output_config.format`, each of type
 * `json_schema`): a JSON text that fits the schema; and when it forces a call of one tool
 * (`tool_choice` naming it, how some clients ask for structured output): that call, with
 * arguments that fit the tool's schema. In the vendor's own wire format, streamed or not. The
 * demo model does neither; a stand-in vendor uses this so clients that parse structured answers
 * can be driven end to end.
 */
import {
  type ApiFormat,
  formatOfProtocol,
  formatSse,
  responseAsStream,
  translateResponse,
} from '../../src/formats/index.js';
import type { ApiProtocol } from '../../src/network/index.js';

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The JSON schema the request asks the answer to follow, or undefined. */
export function requestedSchema(format: ApiFormat, body: Json): Json | undefined {
  const holder =
    format === 'chat'
      ? isRecord(body.response_format) && isRecord(body.response_format.json_schema)
        ? { type: body.response_format.type, schema: body.response_format.json_schema.schema }
        : undefined
      : format === 'responses'
        ? isRecord(body.text) && isRecord(body.text.format)
          ? body.text.format
          : undefined
        : isRecord(body.output_config) && isRecord(body.output_config.format)
          ? body.output_config.format
          : undefined;
  return holder?.type === 'json_schema' && isRecord(holder.schema) ? holder.schema : undefined;
}

/** A value that fits `schema` (objects get every property, so strict schemas are met). */
function valueFitting(schema: Json, depth = 0): unknown {
  if (depth > 16) return null;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ('const' in schema) return schema.const;
  const options = [schema.anyOf, schema.oneOf].find(Array.isArray) as unknown[] | undefined;
  if (options) {
    const first = options.find((o) => isRecord(o) && o.type !== 'null');
    return isRecord(first) ? valueFitting(first, depth + 1) : null;
  }
  const type = Array.isArray(schema.type)
    ? (schema.type as unknown[]).find((t) => t !== 'null')
    : schema.type;
  switch (type) {
    case 'object': {
      const properties = isRecord(schema.properties) ? schema.properties : {};
      return Object.fromEntries(
        Object.entries(properties).map(([name, sub]) => [
          name,
          isRecord(sub) ? valueFitting(sub, depth + 1) : null,
        ]),
      );
    }
    case 'array':
      return isRecord(schema.items) ? [valueFitting(schema.items, depth + 1)] : [];
    case 'string':
      return 'svc';
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return true;
    default:
      return null;
  }
}

/**
 * The tool the request forces the model to call (`tool_choice` naming it, or requiring a tool
 * call when only one is offered), with its schema.
 */
export function forcedTool(
  format: ApiFormat,
  body: Json,
): { name: string; schema: Json } | undefined {
  const choice = body.tool_choice;
  const tools = Array.isArray(body.tools) ? body.tools.filter(isRecord) : [];
  const definitionOf = (tool: Json) =>
    format === 'chat' && isRecord(tool.function) ? tool.function : tool;
  const required = choice === 'required' || (isRecord(choice) && choice.type === 'any');
  const named = !isRecord(choice)
    ? undefined
    : format === 'chat'
      ? isRecord(choice.function) && choice.function.name
      : format === 'responses'
        ? choice.type === 'function' && choice.name
        : choice.type === 'tool' && choice.name;
  const name =
    typeof named === 'string'
      ? named
      : required && tools.length === 1
        ? definitionOf(tools[0]!).name
        : undefined;
  if (typeof name !== 'string') return undefined;
  for (const tool of tools) {
    const definition = definitionOf(tool);
    if (definition.name !== name) continue;
    const schema = format === 'messages' ? definition.input_schema : definition.parameters;
    return { name, schema: isRecord(schema) ? schema : { type: 'object' } };
  }
  return undefined;
}

/**
 * The vendor's answer (content type, body) to a request for structured output or for a call of
 * one forced tool, or undefined for any other request.
 */
export function structuredAnswer(
  protocol: ApiProtocol,
  body: Json,
): { contentType: string; body: string } | undefined {
  const format = formatOfProtocol(protocol);
  if (!format) return undefined;
  const schema = requestedSchema(format, body);
  const tool = schema ? undefined : forcedTool(format, body);
  if (!schema && !tool) return undefined;
  const message = tool
    ? {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_forced',
            type: 'function',
            function: { name: tool.name, arguments: JSON.stringify(valueFitting(tool.schema)) },
          },
        ],
      }
    : { role: 'assistant', content: JSON.stringify(valueFitting(schema!)) };
  const chat = {
    id: 'chatcmpl-structured',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: String(body.model),
    choices: [{ index: 0, message, finish_reason: tool ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 },
  };
  if (body.stream === true) {
    const events = responseAsStream(chat, 'chat', format).map((event) => formatSse(event));
    return { contentType: 'text/event-stream', body: events.join('') };
  }
  return {
    contentType: 'application/json',
    body: JSON.stringify(translateResponse(chat, 'chat', format)),
  };
}
