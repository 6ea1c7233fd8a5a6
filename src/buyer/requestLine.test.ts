import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, logRequestLine } from '../log/index.js';
import { chatCompletion } from './testing/sellerReplies.js';
import { startTestBuyer, type TestBuyer } from './testing/testBuyer.js';

let t: TestBuyer | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

/** A logger as `svc` makes it (redaction included), writing JSON lines into `lines`. */
function capturing(lines: Record<string, unknown>[]) {
  return createLogger({
    destination: { write: (text: string) => lines.push(JSON.parse(text)) } as never,
  });
}

describe("the buyer's request line", () => {
  it('is the line the redacting logger writes, while other lines stay redacted', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = capturing(lines);
    t = await startTestBuyer({ logger });
    t.network.addSeller(
      {
        peerId: 'a',
        services: [{ id: 'gpt-4o', pricing: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 } }],
      },
      (c) => chatCompletion(c, 'hello'),
    );
    const response = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(200);
    await response.text();
    const line = lines.find((entry) => entry.msg === 'request');
    expect(line).toMatchObject({
      requestId: response.headers.get('x-svc-request-id'),
      route: '/v1/chat/completions',
      model: 'gpt-4o',
      status: 200,
      costUsd: '0.000000',
    });
    // The same line through the redacting logger: identical but for the time.
    const again: Record<string, unknown>[] = [];
    const { time: _time, level: _level, msg: _msg, ...fields } = line!;
    logRequestLine(capturing(again), fields as unknown as Parameters<typeof logRequestLine>[1]);
    expect({ ...again[0], time: line!.time }).toEqual(line);
    // Everything else the buyer logs is still redacted.
    logger.warn({ request: { authorization: 'Bearer secret' } }, 'x');
    expect(lines.at(-1)).toMatchObject({ request: { authorization: '[redacted]' } });
  });
});
