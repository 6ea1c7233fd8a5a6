/** The three text API formats and their protocol names on the network. */
/** API formats a service can be reached in, by their wire names (`serviceApiProtocols` in peer metadata). */
export type ApiProtocol =
  | 'openai-chat-completions'
  | 'openai-responses'
  | 'anthropic-messages'
  | 'openai-images'
  | 'video-queue'
  | 'fal-video'
  | 'systemone';

/** A text API format: OpenAI chat-completions, OpenAI responses, Anthropic messages. */
export type ApiFormat = 'chat' | 'responses' | 'messages';

export const API_FORMATS: readonly ApiFormat[] = ['chat', 'responses', 'messages'];

const PROTOCOL_OF: Record<ApiFormat, ApiProtocol> = {
  chat: 'openai-chat-completions',
  responses: 'openai-responses',
  messages: 'anthropic-messages',
};

/** The network protocol name of a format. */
export function protocolOfFormat(format: ApiFormat): ApiProtocol {
  return PROTOCOL_OF[format];
}

/** The format of a network protocol name, or undefined when it is not a text format. */
export function formatOfProtocol(protocol: string): ApiFormat | undefined {
  if (protocol === 'openai-chat-completions') return 'chat';
  if (protocol === 'openai-responses') return 'responses';
  if (protocol === 'anthropic-messages') return 'messages';
  return undefined;
}

/** The format of a client route path (`/v1/chat/completions`, `/v1/responses`, `/v1/messages`). */
export function formatOfPath(path: string): ApiFormat | undefined {
  const clean = path.split('?')[0] ?? '';
  if (clean.endsWith('/chat/completions')) return 'chat';
  if (clean.endsWith('/responses')) return 'responses';
  if (clean.endsWith('/messages')) return 'messages';
  return undefined;
}

/** The upstream path of a format. */
export function pathOfFormat(format: ApiFormat): string {
  return format === 'chat'
    ? '/v1/chat/completions'
    : format === 'responses'
      ? '/v1/responses'
      : '/v1/messages';
}

/** The error style (src/errors) a format's clients expect. */
export function errorStyleOfFormat(format: ApiFormat): 'openai' | 'anthropic' {
  return format === 'messages' ? 'anthropic' : 'openai';
}
