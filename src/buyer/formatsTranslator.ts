/**
 * The translator backed by src/formats: a client may reach a seller that speaks another text
 * format (chat-completions, responses, messages). Same-format requests pass through untouched
 * (bytes of streams included); different formats are translated as parsed events.
 */
import {
  formatOfProtocol,
  formatSse,
  parseSse,
  translateRequest,
  translateResponse,
  translateStream,
  withStreamUsage,
} from '../formats/index.js';
import type { ApiProtocol } from '../network/index.js';
import type { Translator } from './translator.js';

/** Preference when the seller does not speak the client's format. */
const FALLBACK_ORDER: ApiProtocol[] = [
  'openai-chat-completions',
  'anthropic-messages',
  'openai-responses',
];

function formatOf(protocol: ApiProtocol) {
  const format = formatOfProtocol(protocol);
  if (!format) throw new Error(`${protocol} is not a text format`);
  return format;
}

const encoder = new TextEncoder();

export const formatsTranslator: Translator = {
  chooseProtocol: (client, offered) => {
    if (offered.includes(client)) return client;
    if (!formatOfProtocol(client)) return undefined;
    return FALLBACK_ORDER.find((protocol) => offered.includes(protocol));
  },
  request: (client, seller, body) => {
    const translated = translateRequest(body, formatOf(client), formatOf(seller)).body;
    // A chat seller reports stream usage only when asked; the buyer needs it for billing.
    return seller === 'openai-chat-completions' ? withStreamUsage(translated) : translated;
  },
  response: (client, seller, body) =>
    client === seller ? body : translateResponse(body, formatOf(seller), formatOf(client)),
  stream: (client, seller, chunks) => {
    if (client === seller) return chunks;
    const events = translateStream(parseSse(chunks), formatOf(seller), formatOf(client));
    return (async function* () {
      for await (const event of events) yield encoder.encode(formatSse(event));
    })();
  },
};
