/** Small validators that throw SvcError 400 naming the field (`details.param`). */
import { SvcError } from '../errors/index.js';
import type { DocumentSource, ImageSource } from './model.js';

export type Json = Record<string, unknown>;

export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** 400 invalid_request naming `param`. */
export function invalid(param: string, message: string): SvcError {
  return new SvcError('invalid_request', { message: `${param}: ${message}`, details: { param } });
}

/** 400 translation_unsupported naming `param`. */
export function unsupported(param: string, message: string): SvcError {
  return new SvcError('translation_unsupported', {
    message: `${param}: ${message}`,
    details: { param },
  });
}

export function object(value: unknown, param: string): Json {
  if (!isRecord(value)) throw invalid(param, 'must be an object');
  return value;
}

export function array(value: unknown, param: string): unknown[] {
  if (!Array.isArray(value)) throw invalid(param, 'must be an array');
  return value;
}

export function string(value: unknown, param: string): string {
  if (typeof value !== 'string') throw invalid(param, 'must be a string');
  return value;
}

export function optString(value: unknown, param: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  return string(value, param);
}

export function optNumber(value: unknown, param: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw invalid(param, 'must be a number');
  return value;
}

export function optInteger(value: unknown, param: string, min = 1): number | undefined {
  const n = optNumber(value, param);
  if (n === undefined) return undefined;
  if (!Number.isInteger(n) || n < min) throw invalid(param, `must be an integer >= ${min}`);
  return n;
}

export function optBoolean(value: unknown, param: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalid(param, 'must be a boolean');
  return value;
}

/** `stop` as a string or array of strings. */
export function optStops(value: unknown, param: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return [value];
  return array(value, param).map((s, i) => string(s, `${param}[${i}]`));
}

/** Metadata as a string map. */
export function optMetadata(value: unknown, param: string): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(object(value, param))) {
    out[key] = string(v, `${param}.${key}`);
  }
  return out;
}

const DATA_URL = /^data:([a-zA-Z0-9.+-]+\/[a-zA-Z0-9.+-]+)((?:;[^,;]*)*?);base64,/;
const BASE64 = /^[A-Za-z0-9+/\r\n]*={0,2}$/;

/** An image URL (https/http or base64 data URL) as an image source. */
export function imageSourceOfUrl(url: string, param: string): ImageSource {
  if (url.startsWith('data:')) {
    const match = DATA_URL.exec(url);
    if (!match) throw invalid(param, 'is not a valid base64 data URL (data:image/png;base64,...)');
    const mediaType = (match[1] ?? '').toLowerCase();
    if (!mediaType.startsWith('image/')) throw invalid(param, `has media type ${mediaType}`);
    const data = url.slice(match[0].length);
    if (data.length === 0 || !BASE64.test(data)) throw invalid(param, 'has invalid base64 data');
    return { kind: 'base64', mediaType, data };
  }
  if (!/^https?:\/\//i.test(url)) throw invalid(param, 'must be an http(s) URL or a data URL');
  return { kind: 'url', url };
}

/** An image source as a URL string (data URL for base64). */
export function urlOfImageSource(source: ImageSource): string {
  return source.kind === 'url' ? source.url : `data:${source.mediaType};base64,${source.data}`;
}

/** A base64 image source checked for its media type and data. */
export function base64Source(mediaType: string, data: string, param: string): ImageSource {
  if (!mediaType.startsWith('image/')) throw invalid(`${param}.media_type`, 'must be image/*');
  if (data.length === 0 || !BASE64.test(data)) throw invalid(`${param}.data`, 'invalid base64');
  return { kind: 'base64', mediaType, data };
}

let counter = 0;
const RUN = Math.random().toString(36).slice(2, 10);

/** A fresh id with a format prefix (`msg_`, `resp_`, `chatcmpl-`, `call_`...). */
export function newId(prefix: string): string {
  counter = (counter + 1) % 1_000_000_000;
  return `${prefix}${RUN}${counter.toString(36).padStart(6, '0')}`;
}

/** Parses seller JSON text; 502 invalid_seller_response when it is not JSON. */
export function parseSellerJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new SvcError('invalid_seller_response', {
      message: `The seller sent ${what} that is not valid JSON.`,
      cause,
    });
  }
}

/** 502 invalid_seller_response naming what was wrong. */
export function badSeller(message: string): SvcError {
  return new SvcError('invalid_seller_response', {
    message: `The seller sent a malformed response: ${message}`,
  });
}

/** Sets a field when the value is defined (keeps optional fields absent, not undefined). */
export function assign<T extends object, K extends keyof T>(
  target: T,
  key: K,
  value: T[K] | undefined,
): void {
  if (value !== undefined) target[key] = value;
}

/** A document source from a base64 data URL (`data:application/pdf;base64,...`); text is decoded. */
export function documentSourceOfDataUrl(url: string, param: string): DocumentSource {
  const match = DATA_URL.exec(url);
  if (!match)
    throw invalid(param, 'is not a valid base64 data URL (data:application/pdf;base64,...)');
  const mediaType = (match[1] ?? '').toLowerCase();
  const data = url.slice(match[0].length);
  if (data.length === 0 || !BASE64.test(data)) throw invalid(param, 'has invalid base64 data');
  if (mediaType.startsWith('text/'))
    return { kind: 'text', text: Buffer.from(data, 'base64').toString('utf8') };
  if (mediaType !== 'application/pdf')
    throw unsupported(param, `files of type ${mediaType} cannot be translated`);
  return { kind: 'base64', mediaType, data };
}
