/**
 * Nothing is paid for a failed answer (docs/decisions/152-nothing-paid-for-failed-answers.md):
 * an answer with no output tokens that never reached its finish (no finish reason, or a stream
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

/** True when the answer is billed nothing: no output tokens and no finish. */
export function isFailedAnswer(answer: { outputTokens: number; finished: boolean }): boolean {
  return answer.outputTokens === 0 && !answer.finished;
}
