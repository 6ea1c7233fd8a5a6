/**
 * Golden fixtures: `__fixtures__/<from>-to-<to>/<case>.in.json` translated must equal
 * `<case>.out.json`. Case names start with the kind: `request-`, `response-` or `stream-`
 * (streams are arrays of SSE events). Ids we generate and timestamps are normalised.
 * Regenerate outputs after a deliberate change with `UPDATE_GOLDEN=1 npx vitest run golden`
 * and review the diff.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SseEvent } from './sse.js';
import { translateRequest } from './translateRequest.js';
import { translateResponse } from './translateResponse.js';
import { translateStream } from './translateStream.js';
import type { ApiFormat } from './types.js';

const ROOT = join(import.meta.dirname, '__fixtures__');
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const NOW = () => 1_760_000_000_000;

function normalise(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value).replace(/"(chatcmpl-|resp_|msg_|rs_|fc_)[a-z0-9]{6,}"/g, '"$1ID"'),
  );
}

async function translateCase(
  kind: string,
  input: unknown,
  from: ApiFormat,
  to: ApiFormat,
): Promise<unknown> {
  if (kind === 'request') return translateRequest(input, from, to);
  if (kind === 'response') return normalise(translateResponse(input, from, to, { now: NOW }));
  const out: unknown[] = [];
  for await (const e of translateStream(input as SseEvent[], from, to, { now: NOW })) {
    out.push({
      ...(e.event ? { event: e.event } : {}),
      data: e.data === '[DONE]' ? '[DONE]' : normalise(JSON.parse(e.data)),
    });
  }
  return out;
}

const directions = readdirSync(ROOT).filter((d) => /^[a-z]+-to-[a-z]+$/.test(d));

describe.each(directions)('%s', (direction) => {
  const [from, to] = direction.split('-to-') as [ApiFormat, ApiFormat];
  const cases = readdirSync(join(ROOT, direction))
    .filter((f) => f.endsWith('.in.json'))
    .map((f) => f.slice(0, -'.in.json'.length));
  it.each(cases)('%s', async (name) => {
    const input: unknown = JSON.parse(
      readFileSync(join(ROOT, direction, `${name}.in.json`), 'utf8'),
    );
    const actual = await translateCase(name.split('-')[0] ?? '', input, from, to);
    const outPath = join(ROOT, direction, `${name}.out.json`);
    if (UPDATE) writeFileSync(outPath, `${JSON.stringify(actual, null, 2)}\n`);
    expect(actual).toEqual(JSON.parse(readFileSync(outPath, 'utf8')));
  });
});
