/**
 * Nothing is paid for a failed answer (docs/decisions/152-nothing-paid-for-failed-answers.md):
 * an answer that delivered nothing and never reached its finish (no finish reason, or a stream
 * cut or failed before any content) bills nothing at all — no voucher, no gateway charge. The
 * buyer and the seller apply this same rule to the same answer, so their ledgers agree.
 */
import { formatOfProtocol } from './types.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether a whole (non-stream) answer body of `protocol` carries a finish reason. */
export function wholeAnswerFinished(protocol: string, body: unknown): boolean {
  if (!isRecord(body)) return false;
  switch (formatOfProtocol(protocol)) {
    case 'chat':
      return (
        Array.isArray(body.choices) &&
        body.choices.some((choice) => isRecord(choice) && typeof choice.finish_reason === 'string')
      );
    case 'responses':
      return body.status === 'completed' || body.status === 'incomplete';
    case 'messages':
      return typeof body.stop_reason === 'string';
    default:
      // Not a text format (images, video): unit billing, outside this rule.
      return true;
  }
}

/**
 * True when the answer is billed nothing: no finish, and nothing delivered — for a whole answer no
 * output tokens, for a stream (`content` given) no content before it failed, whatever output count
 * its preamble reported (Anthropic's `message_start` carries one): the buyer fails such a stream
 * over to another seller (docs/decisions/217-a-stream-starts-with-its-first-content.md).
 */
export function isFailedAnswer(answer: {
  outputTokens: number;
  finished: boolean;
  content?: boolean;
}): boolean {
  if (answer.finished) return false;
  return answer.content === undefined ? answer.outputTokens === 0 : !answer.content;
}
