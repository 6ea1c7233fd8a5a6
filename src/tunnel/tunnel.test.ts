import { request } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../config/index.js';
import { type Harness, jsonOf, startHarness } from '../gateway/testing/harness.js';
import { startTunnelRelayNode, type TunnelRelayNode } from '../node/index.js';
import { waitFor } from '../testing/index.js';
import { type RunningGatewayTunnel, startGatewayTunnel } from './gatewayTunnel.js';

const network = configSchema.parse({ network: { listen: ['/ip4/127.0.0.1/tcp/0'] } }).network;
const PUBLIC_URL = 'https://tunnel.example.test';
const gatewayKey = generatePrivateKey();

let h: Harness;
let relay: TunnelRelayNode;
let tunnel: RunningGatewayTunnel;
let base: string;

const openTunnel = () =>
  startGatewayTunnel({
    relay: relay.multiaddrs()[0]!,
    gatewayUrl: h.gateway.url,
    tunnelToken: h.gateway.tunnelToken,
    network,
    privateKey: gatewayKey,
    bodyLimitBytes: 1024 * 1024,
  });

beforeAll(async () => {
  h = await startHarness({
    buyer: { costUsd: '0.001000', streamChunks: 10, chunkDelayMs: 40 },
    gateway: { authFailuresPerMinute: 2 },
  });
  relay = await startTunnelRelayNode({
    publicUrl: PUBLIC_URL,
    host: '127.0.0.1',
    port: 0,
    network,
    privateKey: generatePrivateKey(),
    bodyLimitBytes: 64 * 1024,
    maxStreamsPerGateway: 2,
    // The test client stands behind a "TLS terminator" on loopback that the relay trusts.
    trustedProxies: ['127.0.0.1'],
  });
  tunnel = await openTunnel();
  base = `${relay.url}/${tunnel.gatewayId}`;
});
afterAll(async () => {
  await tunnel?.stop();
  await relay?.stop();
  await h?.stop();
});

const chat = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: 'model-a', messages: [{ role: 'user', content: 'hi' }], ...extra });

describe('gateway tunnel', () => {
  it('registers the gateway under its peer id and prints the public bases', () => {
    expect(tunnel.gatewayId).toMatch(/^[0-9a-f]{40}$/);
    expect(tunnel.baseUrl).toBe(`${PUBLIC_URL}/${tunnel.gatewayId}`);
    expect(relay.gateways()).toEqual([tunnel.gatewayId]);
  });

  it('serves the OpenAI and Anthropic SDKs and GET /v1/key with a normal key', async () => {
    const { key, secret } = await h.key();
    const openai = new OpenAI({ apiKey: secret, baseURL: `${base}/v1`, maxRetries: 0 });
    const answer = await openai.chat.completions.create({
      model: 'model-a',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(answer.choices[0]?.message.content).toBe('hello');
    const stream = await openai.chat.completions.create({
      model: 'model-a',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(Array.from({ length: 10 }, (_, i) => `part${i} `).join(''));

    const anthropic = new Anthropic({
      authToken: secret,
      apiKey: null,
      baseURL: base,
      maxRetries: 0,
    });
    const message = await anthropic.messages.create({
      model: 'model-a',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'hello' });
    const final = await anthropic.messages
      .stream({ model: 'model-a', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text' });

    const view = await fetch(`${base}/v1/key`, { headers: { authorization: `Bearer ${secret}` } });
    expect(view.status).toBe(200);
    expect(await jsonOf(view)).toMatchObject({ data: { id: key.id, usage: { requests: 4 } } });
    // Budgets and logs stay at the gateway: all five requests are its own log rows.
    const rows = await waitFor(async () => {
      const all = await h.store.queryLogs({ keyId: key.id });
      return all.length === 5 && all;
    });
    expect(rows.every((row) => row.clientAddress === '127.0.0.1')).toBe(true);
  });

  it('answers 401 to a revoked key through the tunnel', async () => {
    const { key, secret } = await h.key();
    await h.store.revokeKey(key.id, Date.now());
    const response = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: chat(),
    });
    expect(response.status).toBe(401);
    expect((await jsonOf(response)).error.code).toBe('key_revoked');
  });

  it('throttles failed authentications by the real client address from trusted proxies', async () => {
    const fail = (clientAddress: string) =>
      fetch(`${base}/v1/key`, {
        headers: {
          authorization: `Bearer svc_${'A'.repeat(43)}`,
          'x-forwarded-for': clientAddress,
        },
      });
    expect((await fail('203.0.113.7')).status).toBe(401);
    expect((await fail('203.0.113.7')).status).toBe(401);
    const throttled = await fail('203.0.113.7');
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('retry-after')).toMatch(/^\d+$/);
    // Another client behind the same relay is not punished for the first one.
    expect((await fail('203.0.113.8')).status).toBe(401);
    const rows = await waitFor(async () => {
      const all = await h.store.queryLogs({});
      const mine = all.filter((row) => row.clientAddress === '203.0.113.7');
      return mine.length === 3 && mine;
    });
    expect(rows.map((row) => row.status).sort()).toEqual([401, 401, 429]);
  });

  it('passes a client cancel through to the gateway', async () => {
    const { key, secret } = await h.key({ limits: { daily: 1_000_000n } });
    await new Promise<void>((resolve, reject) => {
      const req = request(
        `${base}/v1/chat/completions`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        },
        (res) => {
          expect(res.statusCode).toBe(200);
          let seen = 0;
          res.on('data', () => {
            if (++seen === 2) {
              req.destroy();
              resolve();
            }
          });
          res.on('error', () => {});
        },
      );
      req.on('error', () => {});
      req.end(chat({ stream: true }));
      setTimeout(() => reject(new Error('no data')), 10_000).unref();
    });
    const rows = await waitFor(async () => {
      const all = await h.store.queryLogs({ keyId: key.id });
      return all.length === 1 && all;
    });
    expect(rows[0]).toMatchObject({ status: 499, errorCode: 'request_cancelled', streamed: true });
    expect(rows[0]!.costMicro).toBeLessThan(1000n);
  });

  it('caps bodies and open streams per gateway', async () => {
    const { secret } = await h.key();
    const big = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: chat({ padding: 'x'.repeat(100 * 1024) }),
    });
    expect(big.status).toBe(413);
    expect((await jsonOf(big)).error.code).toBe('body_too_large');

    const open = () =>
      fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: chat({ stream: true }),
      });
    const first = await open();
    const second = await open();
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await open();
    expect(third.status).toBe(503);
    expect((await jsonOf(third)).error.code).toBe('tunnel_busy');
    await first.text();
    await second.text();
    expect((await open().then(async (r) => [r.status, await r.text()]))[0]).toBe(200);
  });

  it('answers 502 while the gateway is away and serves it again when it is back', async () => {
    const { secret } = await h.key();
    const view = () => fetch(`${base}/v1/key`, { headers: { authorization: `Bearer ${secret}` } });
    const unknown = await fetch(`${relay.url}/${'ab'.repeat(20)}/v1/models`);
    expect(unknown.status).toBe(502);
    expect((await jsonOf(unknown)).error.code).toBe('gateway_offline');
    await tunnel.stop();
    const away = await waitFor(async () => {
      const response = await view();
      return response.status === 502 && response;
    });
    expect((await jsonOf(away)).error).toMatchObject({ code: 'gateway_offline' });
    tunnel = await openTunnel();
    expect((await view()).status).toBe(200);
  });
});
