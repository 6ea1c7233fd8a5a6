/**
 * A probe copy's answer counts only when the seller probed served it (src/audit/ask.ts): an
 * answer from any other peer is refused, so no seller is credited with another's honesty.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SVC_HEADER } from '../protocol/index.js';
import { sendThroughProxy } from './ask.js';
import type { ProbeRequest } from './probes.js';

const PROBED = 'aa'.repeat(20);
const OTHER = 'bb'.repeat(20);

/** A stand-in for the buyer's proxy: answers every request as `servedBy` (or unnamed). */
async function proxyAnsweringAs(servedBy: string | undefined): Promise<Server> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, {
        'content-type': 'application/json',
        ...(servedBy ? { [SVC_HEADER.peerId]: servedBy } : {}),
        [SVC_HEADER.estimatedCostUsd]: '0.000012',
      });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: 'the answer' } }],
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const probe: ProbeRequest = {
  peerId: PROBED,
  serviceId: 'model/provider',
  identity: 'default',
  format: 'chat',
  path: '/v1/chat/completions',
  headers: [['content-type', 'application/json']],
  body: new TextEncoder().encode(JSON.stringify({ model: 'model', messages: [] })),
};

describe('a probe copy answered through the proxy', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  const send = (s: Server) =>
    sendThroughProxy({
      baseUrl: () => `http://127.0.0.1:${(s.address() as AddressInfo).port}`,
      marker: 'marker',
      controlSecret: () => undefined,
    })(probe, new AbortController().signal);

  it('counts an answer from the seller probed', async () => {
    server = await proxyAnsweringAs(PROBED);
    const reply = await send(server);
    expect(reply.text).toContain('the answer');
    expect(reply.costMicro).toBe(12n);
  });

  it('refuses an answer from another seller, or from no named seller', async () => {
    server = await proxyAnsweringAs(OTHER);
    await expect(send(server)).rejects.toThrow(`was answered by ${OTHER}`);
    await new Promise((resolve) => server?.close(resolve));
    server = await proxyAnsweringAs(undefined);
    await expect(send(server)).rejects.toThrow('was answered by undefined');
  });
});
