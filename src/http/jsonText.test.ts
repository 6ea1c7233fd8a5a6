/** Long JSON texts built piecewise and written in slices: the same bytes as one JSON.stringify. */
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { jsonText, sendJson, textSlices } from './index.js';

const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((done) => server.close(done));
});

/** A catalog-like body: long arrays at the top and one level down, awkward values inside. */
function body(entries: number): Record<string, unknown> {
  return {
    object: 'list',
    skipped: undefined,
    data: Array.from({ length: entries }, (_, i) => ({
      id: `model-${i} ☃ 😀`,
      when: new Date(0),
      missing: undefined,
      fn: () => i,
      prices: { input: i / 10, output: null },
      peers: Array.from({ length: 70 }, (_, p) => (p % 7 === 0 ? undefined : { p, tag: '"\n' })),
    })),
    // Holes and undefined elements (both JSON null).
    holes: Object.assign(new Array(90), { 3: 'x', 5: undefined }),
    empty: [],
    nested: { list: Array.from({ length: 100 }, (_, i) => i), none: {} },
  };
}

describe('jsonText', () => {
  it('equals JSON.stringify, compact and indented, for long and short values', () => {
    for (const value of [body(200), body(3), [], {}, 'text', 7, null, Array(70).fill({})]) {
      expect(jsonText(value)).toBe(JSON.stringify(value));
      expect(jsonText(value, 2)).toBe(JSON.stringify(value, null, 2));
      expect(jsonText({ version: 1, peers: value }, 2)).toBe(
        JSON.stringify({ version: 1, peers: value }, null, 2),
      );
    }
  });

  it('cuts slices of at most 32,768 characters, never inside a surrogate pair', () => {
    const text = `${'a'.repeat(32_767)}😀${'b'.repeat(40_000)}😀`;
    const slices = [...textSlices(text)];
    expect(slices.join('')).toBe(text);
    expect(slices.every((slice) => slice.length <= 32_768)).toBe(true);
    expect(slices[0]).toBe('a'.repeat(32_767));
    for (const slice of slices) expect(slice).toBe(Buffer.from(slice, 'utf8').toString('utf8'));
  });
});

describe('sendJson', () => {
  it('sends a multi-megabyte body byte for byte with its exact content-length', async () => {
    const value = body(2_000);
    const server = createServer((_req, res) => sendJson(res, 200, value, { 'x-test': 'yes' }));
    servers.push(server);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    const answer = await new Promise<{ headers: Record<string, unknown>; bytes: Buffer }>(
      (resolve, reject) => {
        get({ port, host: '127.0.0.1' }, (res) => {
          const chunks: Buffer[] = [];
          // A slow reader: the server must wait for it rather than fail or cut the body.
          res.pause();
          setTimeout(() => res.resume(), 200);
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ headers: res.headers, bytes: Buffer.concat(chunks) }));
          res.on('error', reject);
        }).on('error', reject);
      },
    );
    const expected = Buffer.from(JSON.stringify(value), 'utf8');
    expect(expected.length).toBeGreaterThan(2_000_000);
    expect(answer.headers['content-length']).toBe(String(expected.length));
    expect(answer.headers['x-test']).toBe('yes');
    expect(answer.bytes.equals(expected)).toBe(true);
  });
});
