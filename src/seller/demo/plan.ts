/**
 * The demo model's decision for one request (docs/guide/selling.md "Demo model"): quote tool results when the
 * turn returns them; call the matching tools when the user asks to read, list or run something
 * and tools are offered; otherwise answer in text. The decision is deterministic; the sampled
 * words that open the text are added by the caller (src/seller/demo/sampler.ts).
 */
import type { Conversation } from './conversation.js';
import { intentsOf } from './intents.js';
import { type PlannedCall, toolCallFor } from './toolCall.js';

export interface DemoReply {
  /** Reasoning shown as a thinking block / reasoning item when the client asked for it. */
  reasoning: string | undefined;
  /** Text before the tool calls, or the whole answer. */
  text: string;
  calls: PlannedCall[];
}

/** Longest quoted tool output, so an answer stays small whatever a tool returned. */
const MAX_QUOTE_CHARS = 4000;

function quoteResults(results: string[]): string {
  const quoted = results.map((result) =>
    result.length > MAX_QUOTE_CHARS ? `${result.slice(0, MAX_QUOTE_CHARS)}\n[…]` : result,
  );
  const heading =
    results.length === 1 ? 'The tool returned:' : `The ${results.length} tools returned:`;
  return `${heading}\n\n${quoted.join('\n\n')}`;
}

/** Plans the answer to a conversation. */
export function planReply(conversation: Conversation): DemoReply {
  const { reasoning: wantsReasoning } = conversation;
  if (conversation.toolResults.length > 0) {
    return {
      reasoning: wantsReasoning ? 'The tool results are in; quoting them.' : undefined,
      text: quoteResults(conversation.toolResults),
      calls: [],
    };
  }
  const said = conversation.userText.replace(/\s+/g, ' ').slice(0, 200);
  const intents = conversation.tools.length > 0 ? intentsOf(conversation.userText) : [];
  const calls = intents
    .map((intent) => toolCallFor(intent, conversation.tools, conversation.cwd))
    .filter((call) => call !== undefined);
  if (calls.length > 0) {
    const names = calls.map((call) => call.name).join(', ');
    return {
      reasoning: wantsReasoning ? `The user asked: "${said}". Calling ${names}.` : undefined,
      text: calls.length === 1 ? `Calling ${names}.` : `Calling ${calls.length} tools: ${names}.`,
      calls,
    };
  }
  const hint =
    intents.length > 0
      ? ' None of the tools offered can do that.'
      : ' Ask me to read a file, list a directory or run a command, and I will call your tools.';
  return {
    reasoning: wantsReasoning ? `The user said: "${said}". No tool call needed.` : undefined,
    text: `svc demo model (offline). You said: "${said}".${hint}`,
    calls: [],
  };
}
