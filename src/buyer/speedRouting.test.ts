import { afterEach, describe, expect, it } from 'vitest';
import { abortableSleep, type SellerCall } from './testing/memoryNetwork.js';
import { type ModelList, readJson } from './testing/readJson.js';
import { chatCompletion } from './testing/sellerReplies.js';
import { startTestBuyer, type TestBuyer } from './testing/testBuyer.js';

let t: TestBuyer | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const SLOW_MS = 300;

/** Two sellers of one model: `slow` answers 300 ms late; `fastPrice` sets the fast one's price. */
async function twoSellers(config: Record<string, unknown> = {}, fastPrice = 1) {
  t = await startTestBuyer({ config, payments: 'unpaid-dev' });
  const served: string[] = [];
  const reply = (name: string, delayMs: number) => async (call: SellerCall) => {
    served.push(name);
    if (delayMs > 0) await abortableSleep(delayMs, call.signal);
    return chatCompletion(call, `from ${name}`, { prompt: 10, completion: 40 });
  };
  const slow = t.network.addSeller(
    {
      peerId: 'aslow',
      services: [{ id: 'llama-3-8b', pricing: { inputUsdPerMillion: 1, outputUsdPerMillion: 1 } }],
    },
    reply('slow', SLOW_MS),
  );
  const fast = t.network.addSeller(
    {
      peerId: 'zfast',
      services: [
        {
          id: 'llama-3-8b',
          pricing: { inputUsdPerMillion: fastPrice, outputUsdPerMillion: fastPrice },
        },
      ],
    },
    reply('fast', 0),
  );
  return { slow, fast, served };
}

let sent = 0;
function post(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  // A new conversation each time: conversation affinity would keep the earlier seller.
  sent++;
  return fetch(`${t!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({
      model: 'llama-3-8b',
      messages: [{ role: 'user', content: `question ${sent}` }],
      ...body,
    }),
  });
}

/** Sends `n` requests one after another; the peer id that served each. */
async function servedBy(
  n: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<string[]> {
  const peers: string[] = [];
  for (let i = 0; i < n; i++) {
    const response = await post(body, headers);
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    peers.push(response.headers.get('x-svc-peer-id')!);
  }
  return peers;
}

describe('routing by measured speed', () => {
  it('sort=latency sends the traffic to the fast seller once both are measured', async () => {
    const { fast, slow } = await twoSellers();
    // Unmeasured sellers go first under a speed sort, so the first two requests measure both.
    const warmup = await servedBy(2, { sort: 'latency' });
    expect(new Set(warmup)).toEqual(new Set([fast, slow]));
    expect(await servedBy(5, { sort: 'latency' })).toEqual(Array(5).fill(fast));

    const catalog = await readJson<ModelList>(await fetch(`${t!.url}/v1/models`));
    const peers = catalog.data.find((entry) => entry.id === 'llama-3-8b')!.peers as unknown as {
      peerId: string;
      ttftMs: number | null;
      outputTokensPerSecond: number | null;
    }[];
    const slowPeer = peers.find((p) => p.peerId === slow)!;
    const fastPeer = peers.find((p) => p.peerId === fast)!;
    expect(slowPeer.ttftMs).toBeGreaterThanOrEqual(SLOW_MS);
    expect(fastPeer.ttftMs).toBeLessThan(slowPeer.ttftMs!);
    expect(fastPeer.outputTokensPerSecond).toBeGreaterThan(slowPeer.outputTokensPerSecond!);

    const listed = await readJson<{
      peers: { peerId: string; offers: { ttftMs: number | null }[] }[];
    }>(await fetch(`${t!.url}/_svc/peers`));
    const slowListed = listed.peers.find((p) => p.peerId === slow)!;
    expect(slowListed.offers[0]!.ttftMs).toBeGreaterThanOrEqual(SLOW_MS);
  });

  it('takes the sort from x-svc-sort, :nitro and a preset; sellers never see sort or max_price', async () => {
    const { fast } = await twoSellers({
      presets: { quick: { model: 'llama-3-8b', routingPreferences: { sort: 'latency' } } },
    });
    await servedBy(2, { sort: 'throughput' });
    expect(await servedBy(2, {})).not.toEqual([fast, fast]);
    expect(await servedBy(2, {}, { 'x-svc-sort': 'latency' })).toEqual([fast, fast]);
    expect(await servedBy(2, { model: 'llama-3-8b:nitro' })).toEqual([fast, fast]);
    expect(await servedBy(2, { model: '@preset/quick' })).toEqual([fast, fast]);
    await servedBy(1, { sort: 'latency', max_price: { prompt: 5 } });
    const last = t!.network.calls.at(-1)!.json;
    expect(last.model).toBe('llama-3-8b');
    expect('sort' in last || 'max_price' in last).toBe(false);
  });

  it(':floor picks the cheaper seller even when it is slower', async () => {
    const { slow, fast } = await twoSellers({}, 2);
    await servedBy(2, { sort: 'latency' });
    expect(await servedBy(3, { sort: 'latency' })).toEqual(Array(3).fill(fast));
    expect(await servedBy(3, { model: 'llama-3-8b:floor', sort: 'latency' })).toEqual(
      Array(3).fill(slow),
    );
  });

  it('max_price excludes dearer sellers; a malformed sort or max_price is a 400', async () => {
    const { slow } = await twoSellers({}, 2);
    expect(await servedBy(2, { sort: 'latency', max_price: { prompt: 1.5 } })).toEqual([
      slow,
      slow,
    ]);
    const badSort = await post({ sort: 'fastest' });
    expect(badSort.status).toBe(400);
    const badPrice = await post({ max_price: { prompt: -1 } });
    expect(badPrice.status).toBe(400);
    const none = await post({ max_price: { completion: 0.5 } });
    expect(none.status).toBe(502);
  });
});
