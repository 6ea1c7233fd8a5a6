/**
 * The text of an answer in any of the three formats, JSON or event stream, as audits compare it:
 * visible text, then each tool call as its name and arguments. Reasoning is left out (vendors
 * summarise or encrypt it differently). Also the cost the buyer reported for it.
 */
import {
  type ApiFormat,
  createStreamParser,
  parseResponse,
  SseDecoder,
  type SseEvent,
} from '../formats/index.js';
import { type MicroUsd, parseUsd } from '../money/index.js';
import { decodeUsageComment } from '../protocol/index.js';

export interface AnswerText {
  text: string;
  /** The cost the buyer's usage comment reported (streams), when there was one. */
  streamCostMicro?: MicroUsd;
}

function fromJson(format: ApiFormat, body: string): string {
  const parsed = parseResponse(JSON.parse(body), format);
  return parsed.parts
    .map((part) =>
      part.type === 'text'
        ? part.text
        : part.type === 'tool_call'
          ? `\n${part.name}(${part.arguments})`
          : '',
    )
    .join('');
}

function fromStream(format: ApiFormat, body: string): AnswerText {
  return fromEvents(format, new SseDecoder({ comments: true }).push(body));
}

/** The text of a streamed answer from its events (the data of each, or the whole SSE events). */
export function streamedAnswerText(format: ApiFormat, events: Iterable<SseEvent>): string {
  return fromEvents(format, events).text;
}

function fromEvents(format: ApiFormat, events: Iterable<SseEvent>): AnswerText {
  const parser = createStreamParser(format);
  let text = '';
  let streamCostMicro: MicroUsd | undefined;
  const kinds = new Map<string, string>();
  for (const event of events) {
    if (event.comment !== undefined) {
      const usage = decodeUsageComment(`: ${event.comment}`);
      if (usage) streamCostMicro = parseUsd(usage.costUsd);
      continue;
    }
    if (event.data === '[DONE]') continue;
    for (const part of parser.push(event)) {
      if (part.type === 'block_start') {
        kinds.set(part.key, part.kind);
        if (part.kind === 'tool_call') text += `\n${part.name ?? ''}(`;
      } else if (part.type === 'block_delta' && part.kind !== 'reasoning') {
        text += part.text;
      } else if (part.type === 'block_stop' && kinds.get(part.key) === 'tool_call') {
        text += ')';
      } else if (part.type === 'error') {
        throw new Error(`the answer stream failed: ${part.error.message}`);
      }
    }
  }
  return streamCostMicro === undefined ? { text } : { text, streamCostMicro };
}

/** True for a body that is an event stream (what a seller sent, without its headers). */
export function looksLikeStream(body: string): boolean {
  return /^(?:event|data|id|retry|:)/.test(body.trimStart());
}

/** The text of an answer body (`stream` when it is an event stream). */
export function answerText(format: ApiFormat, body: string, stream: boolean): AnswerText {
  return stream ? fromStream(format, body) : { text: fromJson(format, body) };
}
