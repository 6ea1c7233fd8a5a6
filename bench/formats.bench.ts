/**
 * Format translation: a ~100 KB agent conversation with tools translated between formats (goal
 * <= 1 ms/request) and stream translation per event (goal <= 20 µs/event), each next to
 * pass-through (JSON.parse + JSON.stringify of the same bytes) measured in the same run.
 */
import {
  countTextTokens,
  estimateInputTokens,
  formatSse,
  parseSse,
  type SseEvent,
  translateRequest,
  translateStream,
} from '../src/formats/index.js';
import { measure, printComparison, printFigure } from './lib.js';

/** A chat-completions conversation of about `targetBytes` with tool calls and results. */
function conversation(targetBytes: number): Record<string, unknown> {
  const messages: Array<Record<string, unknown>> = [
    { role: 'system', content: 'You are a coding agent. Use the tools to inspect and edit files.' },
  ];
  const filler = 'function add(a, b) { return a + b; } // keep diffs small and tests green\n';
  let turn = 0;
  while (JSON.stringify(messages).length < targetBytes) {
    messages.push({
      role: 'user',
      content: `Step ${turn}: look at src/file${turn}.ts and fix it.`,
    });
    messages.push({
      role: 'assistant',
      content: 'Reading the file.',
      tool_calls: [
        {
          id: `call_${turn}a`,
          type: 'function',
          function: {
            name: 'read_file',
            arguments: JSON.stringify({ path: `src/file${turn}.ts` }),
          },
        },
        {
          id: `call_${turn}b`,
          type: 'function',
          function: { name: 'grep', arguments: JSON.stringify({ pattern: 'add', path: 'src' }) },
        },
      ],
    });
    messages.push({ role: 'tool', tool_call_id: `call_${turn}a`, content: filler.repeat(12) });
    messages.push({
      role: 'tool',
      tool_call_id: `call_${turn}b`,
      content: `src/file${turn}.ts:1:function add`,
    });
    messages.push({
      role: 'assistant',
      content: `Fixed file ${turn}: the sum now handles negatives.`,
    });
    turn++;
  }
  messages.push({ role: 'user', content: 'Now run the tests.' });
  const schema = (name: string) => ({
    type: 'function',
    function: {
      name,
      description: `The ${name} tool`,
      parameters: {
        type: 'object',
        properties: { path: { type: 'string' }, pattern: { type: 'string' } },
        required: ['path'],
      },
    },
  });
  return {
    model: 'gpt-4.1',
    messages,
    tools: ['read_file', 'grep', 'write_file', 'run_tests', 'list_dir'].map(schema),
    tool_choice: 'auto',
    max_completion_tokens: 4096,
    stream: true,
  };
}

/** A messages stream with `deltas` text deltas and one tool call. */
function messagesStream(deltas: number): SseEvent[] {
  const m = (type: string, body: Record<string, unknown>) => ({
    event: type,
    data: JSON.stringify({ type, ...body }),
  });
  const events: SseEvent[] = [
    m('message_start', {
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude',
        content: [],
        usage: { input_tokens: 100, output_tokens: 1 },
      },
    }),
    m('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  ];
  for (let i = 0; i < deltas; i++) {
    events.push(
      m('content_block_delta', { index: 0, delta: { type: 'text_delta', text: `token ${i} ` } }),
    );
  }
  events.push(
    m('content_block_stop', { index: 0 }),
    m('content_block_start', {
      index: 1,
      content_block: { type: 'tool_use', id: 'toolu_1', name: 'run_tests', input: {} },
    }),
    m('content_block_delta', {
      index: 1,
      delta: { type: 'input_json_delta', partial_json: '{"path":"src"}' },
    }),
    m('content_block_stop', { index: 1 }),
    m('message_delta', {
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { output_tokens: deltas },
    }),
    m('message_stop', {}),
  );
  return events;
}

export default async function bench(): Promise<Record<string, unknown>> {
  const body = conversation(100_000);
  const text = JSON.stringify(body);
  console.log(
    `conversation: ${(text.length / 1024).toFixed(1)} KB, ${(body.messages as unknown[]).length} messages`,
  );
  const results: Record<string, unknown> = { conversationBytes: text.length };

  const baseline = await measure(() => JSON.stringify(JSON.parse(text)), {
    iterations: 300,
    warmup: 50,
  });
  const messagesText = JSON.stringify(translateRequest(body, 'chat', 'messages').body);
  const responsesText = JSON.stringify(translateRequest(body, 'chat', 'responses').body);
  const directions: Array<
    [string, string, 'chat' | 'responses' | 'messages', 'chat' | 'responses' | 'messages']
  > = [
    ['chat -> messages', text, 'chat', 'messages'],
    ['chat -> responses', text, 'chat', 'responses'],
    ['messages -> chat', messagesText, 'messages', 'chat'],
    ['responses -> messages', responsesText, 'responses', 'messages'],
  ];
  for (const [label, input, from, to] of directions) {
    const stats = await measure(
      () => JSON.stringify(translateRequest(JSON.parse(input), from, to).body),
      {
        iterations: 300,
        warmup: 50,
      },
    );
    printComparison(
      `request ${label} (parse+translate+stringify)`,
      stats.p50Ms,
      baseline.p50Ms,
      'ms',
    );
    const only = await measure(() => translateRequest(JSON.parse(input), from, to), {
      iterations: 300,
      warmup: 50,
    });
    printFigure(`  translate only, incl. JSON.parse`, only.p50Ms, 'ms', '<= 1 ms');
    results[`request ${label}`] = { ours: stats, translateWithParse: only, passThrough: baseline };
  }

  const tokens = await measure(() => estimateInputTokens('chat', body), {
    iterations: 50,
    warmup: 5,
  });
  printFigure('estimateInputTokens (100 KB, cached)', tokens.p50Ms, 'ms');
  const coldText = `${Math.random()} ${'The quick brown fox jumps over the lazy dog. '.repeat(2200)}`;
  const cold = await measure(() => countTextTokens(`${Math.random()}${coldText}`), {
    iterations: 10,
    warmup: 2,
  });
  printFigure('countTextTokens (100 KB, uncached)', cold.p50Ms, 'ms');
  results.tokens = { estimateCached: tokens, countUncached100KB: cold };

  const events = messagesStream(2000);
  const bytes = new TextEncoder().encode(events.map(formatSse).join(''));
  const perEvent = (ms: number) => (ms * 1000) / events.length;
  for (const to of ['chat', 'responses'] as const) {
    const ours = await measure(
      async () => {
        for await (const _ of translateStream(events, 'messages', to)) {
          // drain
        }
      },
      { iterations: 40, warmup: 5 },
    );
    const base = await measure(
      () => {
        for (const e of events) JSON.stringify(JSON.parse(e.data));
      },
      { iterations: 40, warmup: 5 },
    );
    printComparison(
      `stream messages -> ${to} per event`,
      perEvent(ours.p50Ms),
      perEvent(base.p50Ms),
      'µs',
    );
    results[`stream messages -> ${to}`] = {
      oursUsPerEvent: perEvent(ours.p50Ms),
      passThroughUsPerEvent: perEvent(base.p50Ms),
    };
  }
  const withSse = await measure(
    async () => {
      for await (const e of translateStream(parseSse([bytes]), 'messages', 'chat')) formatSse(e);
    },
    { iterations: 40, warmup: 5 },
  );
  printFigure(
    'stream incl. SSE parse + write, per event',
    perEvent(withSse.p50Ms),
    'µs',
    '<= 20 µs',
  );
  results['stream with SSE parse and write'] = { usPerEvent: perEvent(withSse.p50Ms) };
  return results;
}
