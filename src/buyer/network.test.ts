/** The buyer on real libp2p nodes on loopback: discovery, routing, failover, pins, streams. */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../config/index.js';
import { silentLogger } from '../log/index.js';
import type { SvcNode } from '../network/index.js';
import {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
  waitFor,
} from '../network/testing/loopback.js';
import { type RunningBuyerNode, runBuyerNode } from './runBuyerNode.js';
import { type LibP2pSeller, startLibP2pSeller } from './testing/libp2pSeller.js';
import { scoreAll } from './testing/testBuyer.js';

/** A fake OpenAI chat-completions upstream; `failing` answers 500. */
async function fakeUpstream(
  failing: boolean,
): Promise<{ url: string; server: Server; hits: number[] }> {
  const hits: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      hits.push(Date.now());
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        model: string;
        stream?: boolean;
      };
      if (failing) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'upstream exploded', type: 'server_error' } }));
        return;
      }
      if (body.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (delta: object, finish: string | null) =>
          `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        res.write(chunk({ role: 'assistant', content: 'str' }, null));
        res.write(chunk({ content: 'eamed' }, null));
        res.write(chunk({}, 'stop'));
        res.write(
          `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [], usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } })}\n\n`,
        );
        res.end('data: [DONE]\n\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          created: 1,
          model: body.model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: `served ${body.model}` },
              finish_reason: 'stop',
            },
          ],
          usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, hits };
}

describe('buyer over libp2p', () => {
  let bootstrap: SvcNode;
  let bad: Awaited<ReturnType<typeof fakeUpstream>>;
  let good: Awaited<ReturnType<typeof fakeUpstream>>;
  let cheapBroken: LibP2pSeller;
  let dearWorking: LibP2pSeller;
  let buyer: RunningBuyerNode;
  let dataDir: string;
  let openai: OpenAI;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-buyer-net-'));
    bootstrap = await startLoopbackNode('bootstrap');
    const bootstrapAddr = bootstrap.multiaddrs()[0]!;
    bad = await fakeUpstream(true);
    good = await fakeUpstream(false);
    cheapBroken = await startLibP2pSeller({
      bootstrap: bootstrapAddr,
      upstreamUrl: bad.url,
      services: ['gpt-4o-mini'],
      pricing: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 },
    });
    dearWorking = await startLibP2pSeller({
      bootstrap: bootstrapAddr,
      upstreamUrl: good.url,
      services: ['openai/gpt-4o-mini-2024-07-18'],
      pricing: { inputUsdPerMillion: 0.15, outputUsdPerMillion: 0.6 },
    });
    const config = defaultConfig();
    buyer = await runBuyerNode({
      config: { ...config, network: loopbackNetworkConfig({ bootstrap: [bootstrapAddr] }) },
      dataDir,
      identity: randomIdentity(),
      logger: silentLogger(),
      port: 0,
      payments: 'unpaid-dev',
      reputation: scoreAll(80),
    });
    await waitFor(
      async () => {
        await fetch(`${buyer.url}/_svc/peers/refresh`, { method: 'POST' });
        return buyer.directory.list().filter((peer) => peer.reachable).length === 2;
      },
      45_000,
      'two sellers discovered',
    );
    openai = new OpenAI({ apiKey: 'x', baseURL: `${buyer.url}/v1`, maxRetries: 0 });
  }, 90_000);

  afterAll(async () => {
    await buyer?.stop();
    await cheapBroken?.stop();
    await dearWorking?.stop();
    await bootstrap?.stop();
    bad?.server.close();
    good?.server.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists both sellers of the model in rank order', async () => {
    const model = await openai.models.retrieve('gpt-4o-mini');
    const peers = (model as unknown as { peers: Array<{ peerId: string }> }).peers;
    expect(peers.map((peer) => peer.peerId)).toEqual([cheapBroken.peerId, dearWorking.peerId]);
  });

  it('fails over from the cheaper seller whose upstream fails to the next one', async () => {
    const { data, response } = await openai.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe('served openai/gpt-4o-mini-2024-07-18');
    expect(response.headers.get('x-svc-peer-id')).toBe(dearWorking.peerId);
    expect(response.headers.get('x-svc-attempts')).toBe(`${cheapBroken.peerId}@gpt-4o-mini:500`);
    // 11 input at 0.15 + 3 output at 0.6 per million = 3.45 micro-USD, rounded up.
    expect(response.headers.get('x-svc-estimated-cost-usd')).toBe('0.000004');
    expect(bad.hits.length).toBeGreaterThan(0);
  });

  it('never fails over a pin', async () => {
    const before = good.hits.length;
    const error = await openai.chat.completions
      .create({
        model: `0x${cheapBroken.peerId}@gpt-4o-mini`,
        messages: [{ role: 'user', content: 'hi' }],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(500);
    expect(good.hits.length).toBe(before);
  });

  it('streams through libp2p and ends with the svc-usage comment', async () => {
    const response = await fetch(`${buyer.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: `${dearWorking.peerId}@openai/gpt-4o-mini-2024-07-18`,
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    expect(response.headers.get('x-svc-peer-id')).toBe(dearWorking.peerId);
    const text = await response.text();
    expect(text).toContain('"content":"eamed"');
    expect(text.trimEnd().split('\n').at(-1)).toBe(
      ': svc-usage {"inputTokens":7,"cachedInputTokens":0,"outputTokens":2,"costUsd":"0.000003"}',
    );
  });

  it('reports the network in /_svc/status', async () => {
    const status = (await (await fetch(`${buyer.url}/_svc/status`)).json()) as Record<
      string,
      unknown
    >;
    expect(status.peerCount).toBe(2);
    expect(status.reachability).toBe('online');
    expect(status.dhtNodeCount as number).toBeGreaterThan(0);
  });
});
