/** JSON request bodies that must be one object. */
import type { IncomingMessage } from 'node:http';
import { errorMessage, SvcError } from '../errors/index.js';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;

/**
 * Parses bytes that must hold one JSON object. Throws 400 `invalid_json`, with the parser's
 * message and the byte position when it gives one, for text that is not JSON or not an object.
 */
export function parseJsonObject(bytes: Uint8Array): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8'));
  } catch (error) {
    const message = errorMessage(error);
    const position = /position (\d+)/.exec(message)?.[1];
    throw new SvcError('invalid_json', {
      message: `The request body is not valid JSON: ${message}`,
      details: position === undefined ? {} : { position: Number(position) },
      cause: error,
    });
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new SvcError('invalid_json', { message: 'The request body must be a JSON object.' });
  }
  return value as Record<string, unknown>;
}

/** A request's JSON object body: 415 `unsupported_media_type` unless it is sent as JSON. */
export function parseJsonRequest(req: IncomingMessage, raw: Uint8Array): Record<string, unknown> {
  const type = req.headers['content-type'] ?? '';
  if (!JSON_TYPE.test(type)) {
    throw new SvcError('unsupported_media_type', {
      message: `Send the body as application/json (got ${type ? `"${type}"` : 'no content type'}).`,
    });
  }
  return parseJsonObject(raw);
}
