/**
 * The gateway with the buyer in its own process (docs/decisions/180-gateway-runs-its-buyer.md):
 * a client that goes away mid-stream is logged 499 `request_cancelled` and charged what the
 * buyer committed, nothing left reserved; the seller stops being read; and nothing a client puts
 * in `x-svc-*` headers reaches the buyer's decisions or the seller.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessBuyer } from '../buyer/index.js';
import { type SellerCall, sseReply } from '../buyer/testing/memoryNetwork.js';
import { startTestBuyer, type TestBuyer } from '../buyer/testing/testBuyer.js';
import { formatSse, type SseEvent } from '../formats/index.js';
import { STREAMS } from '../formats/testing/samples.js';
import { waitFor } from '../testing/index.js';
import { type Harness, startHarness } from './testing/harness.js';

let t: TestBuyer;
let h: Harness;
const calls: SellerCall[] = [];

/** A chat stream of 200 events, 20 ms apart when asked to stream: long enough to leave in the middle. */
function slowStream(call: SellerCall) {
  const [first, ...rest] = STREAMS.chat.text.map((event) => formatSse(event as SseEvent));
  const middle = Array.from({ length: 200 }, () => rest[0]!);
  const delayMs = call.json.stream === true ? 20 : 0;
  return sseReply([first!, ...middle, ...rest], { delayMs, signal: call.signal });
}

beforeAll(async () => {
  t = await startTestBuyer({ payments: 'unpaid-dev' });
  t.network.addSeller(
    {
      peerId: 'slow',
      services: [
        {
          id: 'gpt-4o',
          protocols: ['openai-chat-completions'],
          pricing: { inputUsdPerMillion: 100, outputUsdPerMillion: 100 },
        },
      ],
    },
    (call) => {
      calls.push(call);
      return slowStream(call);
    },
  );
  h = await startHarness({
    buyerInProcess: { url: t.url, inProcess: inProcessBuyer(t.buyer.service) },
  });
});
afterAll(async () => {
  await h?.stop();
  await t?.stop();
});

describe('gateway with its buyer in process', () => {
  it('logs a client that leaves mid-stream as 499, charges what was committed, and stops the seller', async () => {
    const { key, secret } = await h.key({ limits: { daily: 1_000_000n } });
    const abort = new AbortController();
    const response = await h.call('/v1/chat/completions', {
      method: 'POST',
      secret,
      signal: abort.signal,
      body: JSON.stringify({
        model: 'gpt-4o',
        stream: true,
        messages: [{ role: 'user', content: 'Tell me a long story.' }],
      }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    await reader.read();
    abort.abort();
    const rows = await waitFor(async () => {
      const all = await h.store.queryLogs({ keyId: key.id });
      return all.length === 1 && all[0]!.status === 499 && all;
    });
    expect(rows[0]).toMatchObject({ errorCode: 'request_cancelled', streamed: true });
    expect(rows[0]!.peerId).not.toBeNull();
    expect(await h.store.listReservations(Date.now() + 1)).toEqual([]);
    const record = t.buyer.service.records.get(rows[0]!.requestId!);
    expect(record).toBeDefined();
    expect(await h.store.ledgerTotal(key.id)).toBe(rows[0]!.costMicro);
    // The buyer stopped reading the seller: its call was aborted.
    await waitFor(() => calls.at(-1)?.signal.aborted === true);
  });

  it("drops a client's control headers: its cost cap and identity change nothing", async () => {
    const { key, secret } = await h.key({ limits: { daily: 1_000_000n } });
    const response = await h.call('/v1/chat/completions', {
      method: 'POST',
      secret,
      headers: {
        'x-svc-max-cost-usd': '0.000001',
        'x-svc-buyer-identity': 'someone-else',
        'x-svc-routing-policy': 'not-even-base64',
      },
      body: JSON.stringify({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    });
    // Not refused for a malformed policy nor cut at a one-micro-dollar cap: none of it arrived.
    expect(response.status).toBe(200);
    await response.text();
    const seen = calls.at(-1)!.request.headers;
    expect(Object.keys(seen).filter((name) => name.startsWith('x-svc-'))).toEqual([]);
    const rows = await waitFor(async () => {
      const all = await h.store.queryLogs({ keyId: key.id });
      return all.length === 1 && all;
    });
    expect(rows[0]).toMatchObject({ status: 200, errorCode: null });
  });
});
