/**
 * Seller outputs in each format's exact wire shape (from the public API references), used by the
 * SDK, golden and stream tests. Every sample says "Hello there!" or calls get_weather(Paris), with
 * 125 input tokens of which 100 are cached, and 15 output tokens.
 */
import type { SseEvent } from '../sse.js';
import type { ApiFormat } from '../types.js';

const ev = (event: string | undefined, data: unknown): SseEvent =>
  event === undefined ? { data: JSON.stringify(data) } : { event, data: JSON.stringify(data) };

export type SampleCase = 'text' | 'tool';

export const CHAT_TEXT = {
  id: 'chatcmpl-AbC123',
  object: 'chat.completion',
  created: 1_760_000_000,
  model: 'gpt-4.1-2025-04-14',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: 'Hello there!', refusal: null, annotations: [] },
      logprobs: null,
      finish_reason: 'stop',
    },
  ],
  usage: {
    prompt_tokens: 125,
    completion_tokens: 15,
    total_tokens: 140,
    prompt_tokens_details: { cached_tokens: 100, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
  },
  system_fingerprint: 'fp_1',
};

export const CHAT_TOOL = {
  ...CHAT_TEXT,
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'Let me check.',
        refusal: null,
        tool_calls: [
          {
            id: 'call_W1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    },
  ],
};

const chunk = (delta: unknown, finish: string | null = null) =>
  ev(undefined, {
    id: 'chatcmpl-AbC123',
    object: 'chat.completion.chunk',
    created: 1_760_000_000,
    model: 'gpt-4.1-2025-04-14',
    system_fingerprint: 'fp_1',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
const chatUsage = ev(undefined, {
  id: 'chatcmpl-AbC123',
  object: 'chat.completion.chunk',
  created: 1_760_000_000,
  model: 'gpt-4.1-2025-04-14',
  choices: [],
  usage: CHAT_TEXT.usage,
});

export const CHAT_TEXT_STREAM: SseEvent[] = [
  chunk({ role: 'assistant', content: '', refusal: null }),
  chunk({ content: 'Hello' }),
  chunk({ content: ' there!' }),
  chunk({}, 'stop'),
  chatUsage,
  { data: '[DONE]' },
];

export const CHAT_TOOL_STREAM: SseEvent[] = [
  chunk({ role: 'assistant', content: '', refusal: null }),
  chunk({ content: 'Let me check.' }),
  chunk({
    tool_calls: [
      {
        index: 0,
        id: 'call_W1',
        type: 'function',
        function: { name: 'get_weather', arguments: '' },
      },
    ],
  }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
  chunk({}, 'tool_calls'),
  chatUsage,
  { data: '[DONE]' },
];

const responsesUsage = {
  input_tokens: 125,
  input_tokens_details: { cached_tokens: 100 },
  output_tokens: 15,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 140,
};

const responseBase = {
  id: 'resp_67ccd2bed1ec8190',
  object: 'response',
  created_at: 1_760_000_000,
  error: null,
  incomplete_details: null,
  instructions: null,
  max_output_tokens: null,
  model: 'gpt-4.1-2025-04-14',
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: { effort: null, summary: null },
  store: false,
  temperature: 1,
  text: { format: { type: 'text' } },
  tool_choice: 'auto',
  tools: [],
  top_p: 1,
  truncation: 'disabled',
  user: null,
  metadata: {},
};

const textMessage = {
  type: 'message',
  id: 'msg_67ccd2bf17f0',
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text: 'Hello there!', annotations: [] }],
};

export const RESPONSES_TEXT = {
  ...responseBase,
  status: 'completed',
  output: [textMessage],
  usage: responsesUsage,
};

const toolText = {
  ...textMessage,
  content: [{ type: 'output_text', text: 'Let me check.', annotations: [] }],
};
const functionCall = {
  type: 'function_call',
  id: 'fc_67ccd2c0',
  call_id: 'call_W1',
  name: 'get_weather',
  arguments: '{"city":"Paris"}',
  status: 'completed',
};

export const RESPONSES_TOOL = {
  ...responseBase,
  status: 'completed',
  output: [toolText, functionCall],
  usage: responsesUsage,
};

const r = (type: string, body: Record<string, unknown>, seq: number) =>
  ev(type, { type, ...body, sequence_number: seq });
const inProgress = { ...responseBase, status: 'in_progress', output: [], usage: null };

function responsesTextEvents(text: string[], start: number, outputIndex: number): SseEvent[] {
  const base = { item_id: 'msg_67ccd2bf17f0', output_index: outputIndex };
  const full = text.join('');
  let seq = start;
  return [
    r(
      'response.output_item.added',
      { output_index: outputIndex, item: { ...textMessage, status: 'in_progress', content: [] } },
      seq++,
    ),
    r(
      'response.content_part.added',
      { ...base, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } },
      seq++,
    ),
    ...text.map((delta) =>
      r('response.output_text.delta', { ...base, content_index: 0, delta }, seq++),
    ),
    r('response.output_text.done', { ...base, content_index: 0, text: full }, seq++),
    r(
      'response.content_part.done',
      { ...base, content_index: 0, part: { type: 'output_text', text: full, annotations: [] } },
      seq++,
    ),
    r(
      'response.output_item.done',
      {
        output_index: outputIndex,
        item: { ...textMessage, content: [{ type: 'output_text', text: full, annotations: [] }] },
      },
      seq++,
    ),
  ];
}

export const RESPONSES_TEXT_STREAM: SseEvent[] = [
  r('response.created', { response: inProgress }, 0),
  r('response.in_progress', { response: inProgress }, 1),
  ...responsesTextEvents(['Hello', ' there!'], 2, 0),
  r('response.completed', { response: RESPONSES_TEXT }, 10),
];

export const RESPONSES_TOOL_STREAM: SseEvent[] = [
  r('response.created', { response: inProgress }, 0),
  r('response.in_progress', { response: inProgress }, 1),
  ...responsesTextEvents(['Let me check.'], 2, 0),
  r(
    'response.output_item.added',
    { output_index: 1, item: { ...functionCall, arguments: '', status: 'in_progress' } },
    8,
  ),
  r(
    'response.function_call_arguments.delta',
    { item_id: 'fc_67ccd2c0', output_index: 1, delta: '{"city":' },
    9,
  ),
  r(
    'response.function_call_arguments.delta',
    { item_id: 'fc_67ccd2c0', output_index: 1, delta: '"Paris"}' },
    10,
  ),
  r(
    'response.function_call_arguments.done',
    { item_id: 'fc_67ccd2c0', output_index: 1, arguments: '{"city":"Paris"}' },
    11,
  ),
  r('response.output_item.done', { output_index: 1, item: functionCall }, 12),
  r('response.completed', { response: RESPONSES_TOOL }, 13),
];

const messagesUsage = {
  input_tokens: 25,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 100,
  output_tokens: 15,
  service_tier: 'standard',
};

export const MESSAGES_TEXT = {
  id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5-20250929',
  content: [{ type: 'text', text: 'Hello there!' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: messagesUsage,
};

export const MESSAGES_TOOL = {
  ...MESSAGES_TEXT,
  content: [
    { type: 'text', text: 'Let me check.' },
    {
      type: 'tool_use',
      id: 'toolu_01A09q90qw90lq917835lq9',
      name: 'get_weather',
      input: { city: 'Paris' },
    },
  ],
  stop_reason: 'tool_use',
};

const m = (type: string, body: Record<string, unknown>) => ev(type, { type, ...body });
const messageStart = m('message_start', {
  message: {
    ...MESSAGES_TEXT,
    content: [],
    stop_reason: null,
    usage: { ...messagesUsage, output_tokens: 1 },
  },
});

export const MESSAGES_TEXT_STREAM: SseEvent[] = [
  messageStart,
  m('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  m('ping', {}),
  m('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hello' } }),
  m('content_block_delta', { index: 0, delta: { type: 'text_delta', text: ' there!' } }),
  m('content_block_stop', { index: 0 }),
  m('message_delta', {
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { output_tokens: 15 },
  }),
  m('message_stop', {}),
];

export const MESSAGES_TOOL_STREAM: SseEvent[] = [
  messageStart,
  m('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  m('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Let me check.' } }),
  m('content_block_stop', { index: 0 }),
  m('content_block_start', {
    index: 1,
    content_block: {
      type: 'tool_use',
      id: 'toolu_01A09q90qw90lq917835lq9',
      name: 'get_weather',
      input: {},
    },
  }),
  m('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '' } }),
  m('content_block_delta', {
    index: 1,
    delta: { type: 'input_json_delta', partial_json: '{"city":' },
  }),
  m('content_block_delta', {
    index: 1,
    delta: { type: 'input_json_delta', partial_json: '"Paris"}' },
  }),
  m('content_block_stop', { index: 1 }),
  m('message_delta', {
    delta: { stop_reason: 'tool_use', stop_sequence: null },
    usage: { output_tokens: 15 },
  }),
  m('message_stop', {}),
];

/** Non-streaming seller answers by format and case. */
export const RESPONSES: Record<ApiFormat, Record<SampleCase, unknown>> = {
  chat: { text: CHAT_TEXT, tool: CHAT_TOOL },
  responses: { text: RESPONSES_TEXT, tool: RESPONSES_TOOL },
  messages: { text: MESSAGES_TEXT, tool: MESSAGES_TOOL },
};

/** Seller streams by format and case. */
export const STREAMS: Record<ApiFormat, Record<SampleCase, SseEvent[]>> = {
  chat: { text: CHAT_TEXT_STREAM, tool: CHAT_TOOL_STREAM },
  responses: { text: RESPONSES_TEXT_STREAM, tool: RESPONSES_TOOL_STREAM },
  messages: { text: MESSAGES_TEXT_STREAM, tool: MESSAGES_TOOL_STREAM },
};

/** The tool call id each format's sample uses. */
export const TOOL_CALL_ID: Record<ApiFormat, string> = {
  chat: 'call_W1',
  responses: 'call_W1',
  messages: 'toolu_01A09q90qw90lq917835lq9',
};
