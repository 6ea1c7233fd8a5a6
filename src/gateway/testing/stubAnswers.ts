/**
 * The stub buyer's answers in the vendors' wire formats (src/gateway/testing/stubBuyer.ts): a
 * chat completion or an Anthropic message, and the SSE events of their streams. Fixed input and
 * cached token counts; each streamed chunk is `OUTPUT_PER_CHUNK` output tokens.
 */

export const INPUT_TOKENS = 12;
export const CACHED_TOKENS = 2;
export const OUTPUT_PER_CHUNK = 5;

export function openAiCompletion(model: string, requestId: string, outputTokens: number) {
  return {
    id: `chatcmpl-${requestId}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'hello' },
        finish_reason: 'stop',
        logprobs: null,
      },
    ],
    usage: {
      prompt_tokens: INPUT_TOKENS,
      completion_tokens: outputTokens,
      total_tokens: INPUT_TOKENS + outputTokens,
    },
  };
}

export function anthropicMessage(model: string, requestId: string, outputTokens: number) {
  return {
    id: `msg_${requestId}`,
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text: 'hello' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: INPUT_TOKENS, output_tokens: outputTokens },
  };
}

export function chunkEvent(path: string, model: string, requestId: string, index: number): string {
  if (path === '/v1/messages') {
    const delta = {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: `part${index} ` },
    };
    return `event: content_block_delta\ndata: ${JSON.stringify(delta)}\n\n`;
  }
  const chunk = {
    id: `chatcmpl-${requestId}`,
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, delta: { content: `part${index} ` }, finish_reason: null }],
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

export function anthropicStreamStart(model: string, requestId: string): string {
  const start = {
    type: 'message_start',
    message: { ...anthropicMessage(model, requestId, 0), content: [], stop_reason: null },
  };
  const block = {
    type: 'content_block_start',
    index: 0,
    content_block: { type: 'text', text: '' },
  };
  return `event: message_start\ndata: ${JSON.stringify(start)}\n\nevent: content_block_start\ndata: ${JSON.stringify(block)}\n\n`;
}

export function streamEnd(path: string, outputTokens: number): string {
  if (path === '/v1/messages') {
    return [
      `event: content_block_stop\ndata: ${JSON.stringify({ type: 'content_block_stop', index: 0 })}\n\n`,
      `event: message_delta\ndata: ${JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: outputTokens } })}\n\n`,
      `event: message_stop\ndata: ${JSON.stringify({ type: 'message_stop' })}\n\n`,
    ].join('');
  }
  return 'data: [DONE]\n\n';
}
