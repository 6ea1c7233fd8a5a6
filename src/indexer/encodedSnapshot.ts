/**
 * A snapshot body ready to serve: the JSON bytes, their gzip and brotli forms and a strong ETag,
 * all computed once per rebuild so a request costs a lookup and a write, never a compression.
 */
import { createHash } from 'node:crypto';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

export interface EncodedSnapshot {
  json: Buffer;
  gzip: Buffer;
  brotli: Buffer;
  /** Quoted strong ETag over the JSON bytes (equal bodies from any process: equal tags). */
  etag: string;
  /** Unix ms the body was built. */
  builtAt: number;
}

/** Encodes `body` (the JSON text). Moderate compression levels keep a rebuild well under 1 s. */
export function encodeSnapshot(body: string, builtAt: number): EncodedSnapshot {
  const json = Buffer.from(body, 'utf8');
  return {
    json,
    gzip: gzipSync(json, { level: 6 }),
    brotli: brotliCompressSync(json, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 5,
        [constants.BROTLI_PARAM_SIZE_HINT]: json.byteLength,
      },
    }),
    etag: `"${createHash('sha256').update(json).digest('base64url').slice(0, 32)}"`,
    builtAt,
  };
}
