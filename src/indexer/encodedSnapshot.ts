/**
 * A snapshot body ready to serve: the JSON bytes, their gzip and brotli forms and a strong ETag,
 * all computed once per rebuild so a request costs a lookup and a write, never a compression.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

export interface EncodedSnapshot {
  json: Buffer;
  gzip: Buffer;
  brotli: Buffer;
  /** Quoted strong ETag over the JSON bytes (equal bodies from any process: equal tags). */
  etag: string;
  /** Unix ms the body was built. */
  builtAt: number;
}

/**
 * Encodes `body` (the JSON text). Both compressions run side by side on libuv's thread pool, off
 * the event loop that keeps serving the previous snapshot; moderate levels keep a 10,000-seller
 * rebuild under a second.
 */
export async function encodeSnapshot(body: string, builtAt: number): Promise<EncodedSnapshot> {
  const json = Buffer.from(body, 'utf8');
  const [gzipped, brotli] = await Promise.all([
    gzipAsync(json, { level: 6 }),
    brotliAsync(json, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 5,
        [constants.BROTLI_PARAM_SIZE_HINT]: json.byteLength,
      },
    }),
  ]);
  return {
    json,
    gzip: gzipped,
    brotli,
    etag: `"${createHash('sha256').update(json).digest('base64url').slice(0, 32)}"`,
    builtAt,
  };
}
