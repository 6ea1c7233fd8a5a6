/**
 * Shapes of common clients' requests, used by audits until the buyer has shapes of its own
 * (src/audit/profile.ts): the official OpenAI and Anthropic SDKs for Node (headers as their
 * current versions send them), a chat with a system prompt, a Responses call, and a streamed
 * agent turn with tools. The texts below only give lengths and kinds: they are rewritten.
 */
import { type RequestShape, shapeOf } from './shape.js';

const STAINLESS: [string, string][] = [
  ['x-stainless-retry-count', '0'],
  ['x-stainless-lang', 'js'],
  ['x-stainless-os', 'Linux'],
  ['x-stainless-arch', 'x64'],
  ['x-stainless-runtime', 'node'],
  ['x-stainless-runtime-version', 'v22.20.0'],
];
const FETCH_TAIL: [string, string][] = [
  ['content-type', 'application/json'],
  ['accept-language', '*'],
  ['sec-fetch-mode', 'cors'],
  ['accept-encoding', 'gzip, deflate'],
];
const OPENAI_HEADERS: [string, string][] = [
  ['accept', 'application/json'],
  ['user-agent', 'OpenAI/JS 6.9.1'],
  ['x-stainless-package-version', '6.9.1'],
  ...STAINLESS,
  ...FETCH_TAIL,
];
const ANTHROPIC_HEADERS: [string, string][] = [
  ['accept', 'application/json'],
  ['user-agent', 'Anthropic/JS 0.71.0'],
  ['x-stainless-timeout', '600'],
  ['x-stainless-package-version', '0.71.0'],
  ...STAINLESS,
  ['anthropic-version', '2023-06-01'],
  ...FETCH_TAIL,
];

const prose = (chars: number) => 'word '.repeat(Math.ceil(chars / 5)).slice(0, chars);

const tool = (name: string) => ({
  name,
  description: prose(180),
  input_schema: {
    type: 'object',
    properties: { path: { type: 'string', description: prose(60) } },
    required: ['path'],
  },
});

/** The built-in shapes (identity `default`; the caller sets its own). */
export function builtinShapes(): RequestShape[] {
  const shapes = [
    shapeOf({
      format: 'chat',
      path: '/v1/chat/completions',
      headers: OPENAI_HEADERS,
      identity: 'default',
      body: {
        model: 'model',
        messages: [
          { role: 'system', content: prose(240) },
          { role: 'user', content: prose(420) },
        ],
      },
    }),
    shapeOf({
      format: 'chat',
      path: '/v1/chat/completions',
      headers: OPENAI_HEADERS,
      identity: 'default',
      body: {
        model: 'model',
        messages: [{ role: 'user', content: prose(160) }],
        stream: true,
        stream_options: { include_usage: true },
      },
    }),
    shapeOf({
      format: 'responses',
      path: '/v1/responses',
      headers: OPENAI_HEADERS,
      identity: 'default',
      body: { model: 'model', input: prose(380) },
    }),
    shapeOf({
      format: 'messages',
      path: '/v1/messages',
      headers: ANTHROPIC_HEADERS,
      identity: 'default',
      body: { model: 'model', max_tokens: 1024, messages: [{ role: 'user', content: prose(520) }] },
    }),
    shapeOf({
      format: 'messages',
      path: '/v1/messages',
      headers: ANTHROPIC_HEADERS,
      identity: 'default',
      body: {
        model: 'model',
        max_tokens: 8192,
        system: prose(1600),
        tools: [tool('read_file'), tool('list_directory'), tool('search')],
        messages: [{ role: 'user', content: prose(300) }],
        stream: true,
      },
    }),
  ];
  return shapes.filter((shape): shape is RequestShape => shape !== undefined);
}
