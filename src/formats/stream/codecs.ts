/** The stream parser and renderer of each format. */
import { createChatStreamParser } from '../chat/streamParser.js';
import { createChatStreamRenderer } from '../chat/streamRenderer.js';
import { createMessagesStreamParser } from '../messages/streamParser.js';
import { createMessagesStreamRenderer } from '../messages/streamRenderer.js';
import type { TranslateContext } from '../model.js';
import { createResponsesStreamParser } from '../responses/streamParser.js';
import { createResponsesStreamRenderer } from '../responses/streamRenderer.js';
import type { ApiFormat } from '../types.js';
import type { StreamParser, StreamRenderer } from './parts.js';

/** A fresh stream parser for `format`. */
export function createStreamParser(format: ApiFormat): StreamParser {
  if (format === 'chat') return createChatStreamParser();
  if (format === 'responses') return createResponsesStreamParser();
  return createMessagesStreamParser();
}

/** A fresh stream renderer for `format`. */
export function createStreamRenderer(
  format: ApiFormat,
  ctx: TranslateContext = {},
): StreamRenderer {
  if (format === 'chat') return createChatStreamRenderer(ctx);
  if (format === 'responses') return createResponsesStreamRenderer(ctx);
  return createMessagesStreamRenderer(ctx);
}
