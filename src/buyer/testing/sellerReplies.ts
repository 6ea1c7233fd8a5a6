/** Vendor-format replies for scripted test sellers (exact OpenAI / Anthropic wire shapes). */
import { jsonReply, type ScriptedResponse, type SellerCall, sseReply } from './memoryNetwork.js';

/** A chat-completions response with usage. */
export function chatCompletion(
  call: SellerCall,
  text: string,
  usage = { prompt: 12, completion: 5 },
): ScriptedResponse {
  return jsonReply(200, {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: call.json.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text },
        finish_reason: 'stop',
        logprobs: null,
      },
    ],
    usage: {
      prompt_tokens: usage.prompt,
      completion_tokens: usage.completion,
      total_tokens: usage.prompt + usage.completion,
    },
  });
}

/** One chat-completions stream event carrying `delta` (and `finish` as its finish reason). */
export function chatChunk(
  delta: Record<string, unknown>,
  finish: string | null = null,
  model: unknown = 'm',
): string {
  return `data: ${JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  })}\n\n`;
}

/** A streamed chat completion: one chunk per word, then a usage chunk and [DONE]. */
export function chatStream(
  call: SellerCall,
  words: string[],
  options: { delayMs?: number } = {},
): ScriptedResponse {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    chatChunk(delta, finish, call.json.model);
  const events = [
    chunk({ role: 'assistant', content: '' }),
    ...words.map((word) => chunk({ content: word })),
    chunk({}, 'stop'),
    `data: ${JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: call.json.model,
      choices: [],
      usage: { prompt_tokens: 9, completion_tokens: words.length, total_tokens: 9 + words.length },
    })}\n\n`,
    'data: [DONE]\n\n',
  ];
  return sseReply(events, { ...options, signal: call.signal });
}

/** An Anthropic messages response. */
export function anthropicMessage(call: SellerCall, text: string): ScriptedResponse {
  return jsonReply(200, {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: call.json.model,
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: 20,
      output_tokens: 7,
      cache_read_input_tokens: 4,
      cache_creation_input_tokens: 0,
    },
  });
}

/** An OpenAI-style error reply. */
export function openAiError(
  status: number,
  message: string,
  headers: Record<string, string> = {},
): ScriptedResponse {
  return jsonReply(
    status,
    { error: { message, type: 'server_error', code: null, param: null } },
    headers,
  );
}
