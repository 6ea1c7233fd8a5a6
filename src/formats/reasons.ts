/**
 * The ONE stop/finish-reason table: internal reason <-> chat `finish_reason` <-> responses
 * `status`/`incomplete_details.reason` <-> messages `stop_reason`.
 */
import type { StopReason } from './model.js';

type ChatFinish = 'stop' | 'length' | 'tool_calls' | 'content_filter';
type MessagesStop =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal';
interface ResponsesEnd {
  status: 'completed' | 'incomplete';
  incomplete?: 'max_output_tokens' | 'content_filter';
}

const TABLE: Record<
  StopReason,
  { chat: ChatFinish; messages: MessagesStop; responses: ResponsesEnd }
> = {
  end_turn: { chat: 'stop', messages: 'end_turn', responses: { status: 'completed' } },
  stop_sequence: { chat: 'stop', messages: 'stop_sequence', responses: { status: 'completed' } },
  max_tokens: {
    chat: 'length',
    messages: 'max_tokens',
    responses: { status: 'incomplete', incomplete: 'max_output_tokens' },
  },
  tool_use: { chat: 'tool_calls', messages: 'tool_use', responses: { status: 'completed' } },
  content_filter: {
    chat: 'content_filter',
    messages: 'refusal',
    responses: { status: 'incomplete', incomplete: 'content_filter' },
  },
  refusal: { chat: 'content_filter', messages: 'refusal', responses: { status: 'completed' } },
  pause_turn: { chat: 'stop', messages: 'pause_turn', responses: { status: 'completed' } },
};

export function chatFinishOf(reason: StopReason): ChatFinish {
  return TABLE[reason].chat;
}

export function messagesStopOf(reason: StopReason): MessagesStop {
  return TABLE[reason].messages;
}

export function responsesEndOf(reason: StopReason): ResponsesEnd {
  return TABLE[reason].responses;
}

/** Internal reason of a chat finish_reason; tool calls present turn "stop" into tool_use. */
export function stopOfChat(finish: string | null | undefined, hasToolCalls: boolean): StopReason {
  if (finish === 'length') return 'max_tokens';
  if (finish === 'content_filter') return 'content_filter';
  if (finish === 'tool_calls' || finish === 'function_call' || hasToolCalls) return 'tool_use';
  return 'end_turn';
}

/** Internal reason of a messages stop_reason. */
export function stopOfMessages(stop: string | null | undefined): StopReason {
  switch (stop) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'max_tokens';
    case 'stop_sequence':
      return 'stop_sequence';
    case 'tool_use':
      return 'tool_use';
    case 'refusal':
      return 'refusal';
    case 'pause_turn':
      return 'pause_turn';
    default:
      return 'end_turn';
  }
}

/** Internal reason of a responses status / incomplete reason. */
export function stopOfResponses(
  status: string | null | undefined,
  incompleteReason: string | null | undefined,
  hasToolCalls: boolean,
): StopReason {
  if (status === 'incomplete') {
    return incompleteReason === 'content_filter' ? 'content_filter' : 'max_tokens';
  }
  return hasToolCalls ? 'tool_use' : 'end_turn';
}
