import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatCompletion } from './testing/sellerReplies.js';
import { startTestBuyer, type TestBuyer } from './testing/testBuyer.js';

let t: TestBuyer;
beforeAll(async () => {
  t = await startTestBuyer();
  t.network.addSeller(
    {
      peerId: 'a',
      services: [{ id: 'gpt-4o', pricing: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 } }],
    },
    (c) => chatCompletion(c, 'hello'),
  );
});
afterAll(() => t.stop());

/** POSTs a chat body to `path` as sent (no client-side URL normalisation); the status. */
function post(path: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const req = httpRequest(
      `${t.url}${path}`,
      { method: 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }));
  });
}

describe('request paths', () => {
  it('routes a path with trailing slashes or dot segments as its plain form', async () => {
    expect(await post('/v1/chat/completions')).toBe(200);
    expect(await post('/v1/chat/completions//')).toBe(200);
    expect(await post('/v1/x/../chat/./completions')).toBe(200);
    expect(await post('/v1/chat/completions%2F')).toBe(404);
    expect(await post('/v1/chat/completions-x')).toBe(404);
  });
});
