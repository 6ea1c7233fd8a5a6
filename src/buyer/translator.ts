/**
 * The format-translation seam. Until the formats capability is merged the buyer only routes to
 * sellers that speak the client's format (pass-through); plugging translation in means passing
 * another `Translator` to `startBuyer` — nothing else changes.
 */
import type { ApiProtocol } from '../network/index.js';
import { type ProtocolChooser, passThroughProtocol } from '../routing/index.js';

export interface Translator {
  /** The protocol to speak to a seller offering `offered`, for a client speaking `client`. */
  chooseProtocol: ProtocolChooser;
  /** The request body in the seller's protocol. */
  request(
    client: ApiProtocol,
    seller: ApiProtocol,
    body: Record<string, unknown>,
  ): Record<string, unknown>;
  /** A complete response body in the client's protocol. */
  response(client: ApiProtocol, seller: ApiProtocol, body: unknown): unknown;
  /** SSE bytes in the client's protocol. */
  stream(
    client: ApiProtocol,
    seller: ApiProtocol,
    chunks: AsyncIterable<Uint8Array>,
  ): AsyncIterable<Uint8Array>;
}

function same(client: ApiProtocol, seller: ApiProtocol): void {
  if (client !== seller) throw new Error(`pass-through cannot translate ${client} to ${seller}`);
}

/** Routes only to sellers speaking the client's format; bodies pass unchanged. */
export const passThroughTranslator: Translator = {
  chooseProtocol: passThroughProtocol,
  request: (client, seller, body) => {
    same(client, seller);
    return body;
  },
  response: (client, seller, body) => {
    same(client, seller);
    return body;
  },
  stream: (client, seller, chunks) => {
    same(client, seller);
    return chunks;
  },
};

/** Seller path of each protocol. */
export const PROTOCOL_PATHS: Partial<Record<ApiProtocol, string>> = {
  'openai-chat-completions': '/v1/chat/completions',
  'openai-responses': '/v1/responses',
  'anthropic-messages': '/v1/messages',
};
