import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { PeerId } from '../identity/index.js';
import { createLogger } from '../log/index.js';
import type { OutboundReply } from '../network/index.js';
import { createSellerHandler } from './handler.js';
import { AdmitAllPayments } from './payments.js';
import { runtimeProviders } from './startSeller.js';

const BUYER = '0x2222222222222222222222222222222222222222' as PeerId;

async function drain(reply: OutboundReply): Promise<void> {
  if (reply.body instanceof Uint8Array || reply.body === undefined) return;
  for await (const _ of reply.body) {
    // consumed
  }
}

describe('seller request lines', () => {
  it('writes one info line per request with model, status, tokens and cost, never the prompt', async () => {
    const out = new PassThrough();
    const lines: string[] = [];
    out.on('data', (chunk: Buffer) => lines.push(...chunk.toString().trim().split('\n')));
    const handle = createSellerHandler({
      sellerPeerId: '0x1111111111111111111111111111111111111111' as PeerId,
      providers: () =>
        runtimeProviders(
          {
            displayName: 's',
            uploadLimitBytes: 1 << 20,
            providers: [
              {
                type: 'demo',
                services: { 'demo-chat': { categories: [] } },
                defaultPricing: { inputUsdPerMillion: 1, outputUsdPerMillion: 2 },
                maxConcurrency: 2,
              },
            ],
          },
          {},
        ),
      payments: new AdmitAllPayments(),
      onLoadChange: () => {},
      logger: createLogger({ level: 'info', pretty: false, destination: out }),
    });
    const send = (body: unknown) =>
      handle({
        peerId: BUYER,
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json' },
        body: new TextEncoder().encode(JSON.stringify(body)),
        signal: new AbortController().signal,
      });
    const reply = await send({
      model: 'demo-chat',
      stream: true,
      messages: [{ role: 'user', content: 'my very private prompt' }],
    });
    await drain(reply);
    await reply.trailer!();
    const refused = await send({ model: 'nope', messages: [] });
    await refused.trailer!();
    // Written after the answer's own writes: two rounds of immediates later.
    for (let round = 0; round < 2; round++) await new Promise((resolve) => setImmediate(resolve));
    const requests = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request');
    expect(requests).toHaveLength(2);
    expect(requests[0]).toMatchObject({
      level: 30,
      route: '/v1/chat/completions',
      model: 'demo-chat',
      peer: BUYER,
      status: 200,
      costUsd: expect.stringMatching(/^0\.\d{6}$/),
    });
    expect(requests[0].requestId).toMatch(/\S/);
    expect(requests[0].inputTokens).toBeGreaterThan(0);
    expect(requests[0].outputTokens).toBeGreaterThan(0);
    expect(requests[1]).toMatchObject({ status: 404, errorCode: 'service_not_offered' });
    expect(lines.join('\n')).not.toContain('private prompt');
  });
});
