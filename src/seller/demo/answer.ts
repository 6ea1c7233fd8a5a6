/** A planned reply with everything the format writers need: ids, argument strings, usage. */
import type { TokenUsage } from '../../money/index.js';
import type { DemoReply } from './plan.js';

export interface AnswerCall {
  /** Call id, unique per request (derived from the request, so still deterministic). */
  id: string;
  name: string;
  /** The arguments as the JSON string the formats carry. */
  arguments: string;
}

export interface Answer {
  model: string;
  /** Id suffix shared by the response / message / items. */
  id: string;
  created: number;
  reasoning: string | undefined;
  /** An opaque token for the reasoning (Anthropic signature, OpenAI encrypted content). */
  reasoningToken: string;
  text: string;
  calls: AnswerCall[];
  usage: TokenUsage;
  /** The answer stopped at the request's output-token limit (`length` / `max_tokens`). */
  truncated: boolean;
}

/** Word-sized stream pieces (keeping spaces), as vendors roughly send text. */
export function words(text: string): string[] {
  const pieces = text.match(/\S+\s*|\s+/g) ?? [];
  return pieces.length > 0 ? pieces : [''];
}

/** A tool call's argument string in several deltas, as vendors stream it. */
export function argumentPieces(json: string): string[] {
  const size = Math.max(1, Math.ceil(json.length / 4));
  const pieces: string[] = [];
  for (let at = 0; at < json.length; at += size) pieces.push(json.slice(at, at + size));
  return pieces.length > 0 ? pieces : [''];
}

/** Fills in ids and argument strings of a plan. */
export function answerOf(
  reply: DemoReply,
  model: string,
  requestHash: string,
  usage: TokenUsage,
  truncated = false,
): Answer {
  return {
    model,
    id: `svcdemo${requestHash.slice(0, 24)}`,
    created: 1_700_000_000,
    reasoning: reply.reasoning,
    reasoningToken: Buffer.from(`svc-demo:${requestHash.slice(0, 32)}`).toString('base64'),
    text: reply.text,
    calls: reply.calls.map((call, index) => ({
      id: `call_${requestHash.slice(0, 16)}${index}`,
      name: call.name,
      arguments: JSON.stringify(call.arguments),
    })),
    usage,
    truncated,
  };
}
