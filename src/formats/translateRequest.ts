/** Request translation: parse the client's format into the internal model, render the seller's. */
import { parseChatRequest } from './chat/parseRequest.js';
import { renderChatRequest } from './chat/renderRequest.js';
import { isRecord } from './check.js';
import { parseMessagesRequest } from './messages/parseRequest.js';
import { renderMessagesRequest } from './messages/renderRequest.js';
import type { Conversation } from './model.js';
import { parseResponsesRequest } from './responses/parseRequest.js';
import { renderResponsesRequest } from './responses/renderRequest.js';
import { renameToolsForSeller } from './toolNames.js';
import type { ApiFormat } from './types.js';

export interface TranslatedRequest {
  /** The request body in the target format (the same object on pass-through). */
  body: Record<string, unknown>;
  /** Parameters dropped or changed because the target cannot carry them (harmless ones only). */
  warnings: string[];
  /**
   * Seller tool name -> client tool name when tools had to be renamed for the seller (names over
   * 64 characters or with characters OpenAI refuses); pass it as `TranslateContext.toolNames`.
   */
  toolNames?: Record<string, string>;
}

/** Parses and validates a request body of `format` into the internal model (400 naming the field). */
export function parseRequest(
  body: unknown,
  format: ApiFormat,
  warnings: string[] = [],
): Conversation {
  if (format === 'chat') return parseChatRequest(body, warnings);
  if (format === 'responses') return parseResponsesRequest(body, warnings);
  return parseMessagesRequest(body, warnings);
}

/** Renders the internal model as a request body of `format`. */
export function renderRequest(
  conv: Conversation,
  format: ApiFormat,
  warnings: string[] = [],
): Record<string, unknown> {
  const body =
    format === 'chat'
      ? renderChatRequest(conv, warnings)
      : format === 'responses'
        ? renderResponsesRequest(conv, warnings)
        : renderMessagesRequest(conv, warnings);
  return body as unknown as Record<string, unknown>;
}

/** Validates a client request in its own format (throws SvcError 400 naming the field). */
export function validateRequest(body: unknown, format: ApiFormat): void {
  if (format === 'responses' && isRecord(body) && body.previous_response_id) {
    // Server-side state: tool outputs may answer calls we cannot see; only check the shape.
    const { previous_response_id: _ignored, ...rest } = body;
    if (!Array.isArray(rest.input)) return;
    const input = rest.input.filter((i) => !(isRecord(i) && i.type === 'function_call_output'));
    if (input.length > 0) parseRequest({ ...rest, input }, format);
    return;
  }
  parseRequest(body, format);
}

/**
 * Translates a request body from the client's format to the seller's. Same format: validated and
 * returned untouched. Throws SvcError 400 (`invalid_request` / `translation_unsupported`) naming
 * the parameter when the body is invalid or a parameter cannot be carried.
 */
export function translateRequest(body: unknown, from: ApiFormat, to: ApiFormat): TranslatedRequest {
  if (from === to) {
    validateRequest(body, from);
    return { body: body as Record<string, unknown>, warnings: [] };
  }
  const warnings: string[] = [];
  const conv = parseRequest(body, from, warnings);
  const toolNames = renameToolsForSeller(conv);
  const out: TranslatedRequest = { body: renderRequest(conv, to, warnings), warnings };
  if (toolNames) out.toolNames = toolNames;
  return out;
}

/** A chat stream request with `stream_options.include_usage` set, so the seller reports usage. */
export function withStreamUsage(body: Record<string, unknown>): Record<string, unknown> {
  if (body.stream !== true) return body;
  const options = isRecord(body.stream_options) ? body.stream_options : {};
  if (options.include_usage === true) return body;
  return { ...body, stream_options: { ...options, include_usage: true } };
}
