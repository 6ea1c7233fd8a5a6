/** The buyer's text routes: chat-completions, responses and messages, with their error style. */
import type { ProxyRoute } from './context.js';

export const PROXY_ROUTES: Readonly<Record<string, ProxyRoute>> = {
  '/v1/chat/completions': {
    name: 'chat_completions',
    protocol: 'openai-chat-completions',
    style: 'openai',
  },
  '/v1/responses': { name: 'responses', protocol: 'openai-responses', style: 'openai' },
  '/v1/messages': { name: 'messages', protocol: 'anthropic-messages', style: 'anthropic' },
};
