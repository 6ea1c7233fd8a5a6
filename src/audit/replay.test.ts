/**
 * Audits of real answers (docs/decisions/221-audits-of-real-answers.md) in the in-process market
 * (src/audit/testing/demoMarket.ts): what a replay sends, to whom, what it records and pays, and
 * that nothing changes while the option is off.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AuditConfig } from '../config/index.js';
import { type ApiFormat, protocolOfFormat, SseDecoder } from '../formats/index.js';
import { demoAnswer } from '../seller/index.js';
import { answerText } from './answerText.js';
import { type Replay, replayOf } from './replay.js';
import { comparableText } from './statistics.js';
import { DemoMarket, type MarketSeller, OPEN_AUDITS, seededRandom } from './testing/demoMarket.js';
import { type TimedRequest, userTraffic } from './testing/userTraffic.js';

const MODEL = 'svc-demo-smart';
const REAL: AuditConfig = { ...OPEN_AUDITS, realAnswers: true };
const HONEST: MarketSeller[] = [{ label: 'h1' }, { label: 'h2' }, { label: 'h3' }];
const markets: DemoMarket[] = [];
afterEach(() => {
  for (const market of markets.splice(0)) market.close();
});

function open(options: { config?: AuditConfig; offerAnswers?: boolean; seed?: number } = {}) {
  const market = new DemoMarket({
    model: MODEL,
    sellers: [...HONEST, { label: 'x' }],
    seed: options.seed ?? 41,
    ...options,
  });
  markets.push(market);
  return market;
}

/** The buyer's traffic, each request with a fresh W3C trace context as OpenTelemetry sends. */
function tracedTraffic(count: number, seed: number): TimedRequest[] {
  const random = seededRandom(seed + 1);
  const hex = (digits: number) =>
    Array.from({ length: digits }, () => Math.floor(random() * 16).toString(16)).join('');
  return userTraffic(count, seededRandom(seed)).map(({ at, request }) => ({
    at,
    request: {
      ...request,
      headers: [...request.headers, ['traceparent', `00-${hex(32)}-${hex(16)}-01`]],
    },
  }));
}

const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

describe('audits of real answers', () => {
  it('replays a request to the references with its exact body bytes and fresh per-request header ids, never to the seller that answered it', async () => {
    const market = open({ config: REAL });
    const traffic = tracedTraffic(120, 42);
    await market.run('x', traffic);
    const x = market.peerId('x');
    const views = [...market.views.values()].flat();
    const users = market.views.get(x)!.filter((view) => !view.probe);
    // Every audit is a replay, and the seller audited receives none of it.
    expect(market.probes.length).toBeGreaterThan(20);
    expect(market.probes.every((probe) => probe.id.startsWith('replay_'))).toBe(true);
    expect(market.views.get(x)!.filter((view) => view.probe)).toHaveLength(0);
    const traceOf = (headers: readonly [string, string][]) =>
      headers.find(([name]) => name === 'traceparent')?.[1];
    const replays = views.filter((view) => view.probe);
    expect(replays.length).toBeGreaterThanOrEqual(2 * market.probes.length);
    for (const view of replays) {
      // The exact bytes of one of the requests x served, with its other headers in order.
      const original = users.find((user) => same(user.body, view.body));
      expect(original).toBeDefined();
      expect(view.path).toBe(original!.path);
      const names = (headers: readonly [string, string][]) => headers.map(([name]) => name);
      expect(names(view.headers)).toEqual(names(original!.headers));
      expect(traceOf(view.headers)).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    }
    // No trace context is ever seen twice.
    expect(new Set(views.map((view) => traceOf(view.headers))).size).toBe(views.length);
  });

  it('records the audited seller’s own answer in its place, priced at what the user paid', async () => {
    const market = open({ config: REAL });
    await market.run('x', userTraffic(60, seededRandom(43)));
    const x = market.peerId('x');
    expect(market.answersRead).toBeGreaterThan(0);
    for (const probe of market.probes) {
      expect(probe.answers[0]!.peerId).toBe(x);
      expect(probe.answers[0]!.text.length).toBeGreaterThan(0);
      expect(probe.answers.slice(1).map((answer) => answer.peerId)).not.toContain(x);
    }
  });

  it('asks only references the buyer’s routing admits, as probes do', async () => {
    const market = new DemoMarket({
      model: MODEL,
      sellers: [...HONEST, { label: 'x' }, { label: 'u' }],
      seed: 46,
      config: REAL,
      trusted: ['h1', 'h2', 'h3', 'x'],
    });
    markets.push(market);
    await market.run('x', userTraffic(60, seededRandom(47)));
    expect(market.probes.length).toBeGreaterThan(10);
    expect(market.views.get(market.peerId('u')) ?? []).toHaveLength(0);
  });

  it('pays the references within the same allowance as probes', async () => {
    const config: AuditConfig = {
      ...REAL,
      dailyBudgetUsd: 0.25,
      maxShareOfSpend: 0.02,
    };
    const market = open({ config, seed: 44 });
    const day = userTraffic(800, seededRandom(7)).filter((item) => item.at < 86_000_000);
    await market.run('x', day, 86_000_000);
    const spent = market.store.spentToday('default');
    expect(market.probes.length).toBeGreaterThan(0);
    expect(spent.audit).toBe(market.spend.audit);
    expect(spent.audit).toBeGreaterThan(0n);
    expect(spent.audit * 100n).toBeLessThanOrEqual(spent.own * 2n);
  });

  it('with the option off, nothing changes: no answer is read, every audit is a probe', async () => {
    const market = open({ offerAnswers: true });
    await market.run('x', userTraffic(60, seededRandom(45)));
    expect(market.answersRead).toBe(0);
    expect(market.probes.length).toBeGreaterThan(10);
    expect(market.probes.every((probe) => probe.id.startsWith('probe_'))).toBe(true);
    expect(market.views.get(market.peerId('x'))!.some((view) => view.probe)).toBe(true);
  });
});

describe('replayOf', () => {
  const answer = (body: Record<string, unknown>, rawBody?: Uint8Array) => ({
    peerId: 'p',
    modelKey: 'm',
    identity: 'default',
    costMicro: 10n,
    arrivedAt: 0,
    request: () => ({
      format: 'responses' as const,
      path: '/v1/responses',
      body,
      headers: [] as [string, string][],
      identity: 'default',
      ...(rawBody ? { rawBody } : {}),
    }),
    answer: () => ({
      sellerProtocol: 'openai-responses' as const,
      body: new TextEncoder().encode(
        JSON.stringify({
          object: 'response',
          output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hello there.' }] }],
        }),
      ),
    }),
  });
  const bytes = (body: unknown) => new TextEncoder().encode(JSON.stringify(body));

  it('replays a request whose bytes were kept, with the answer’s text', () => {
    const body = { model: 'm', input: 'hi' };
    const replay = replayOf(answer(body, bytes(body)), 'svc');
    expect(typeof replay).not.toBe('string');
    expect(replay).toMatchObject({
      audited: { peerId: 'p', text: 'Hello there.', costUsd: '0.000010' },
    });
  });

  it('reads a streamed answer from the events the buyer scanned, in each format, as from its bytes', async () => {
    const requests = {
      chat: { model: MODEL, messages: [{ role: 'user', content: 'Say hello.' }], stream: true },
      responses: { model: MODEL, input: 'Say hello.', stream: true },
      messages: {
        model: MODEL,
        max_tokens: 200,
        messages: [{ role: 'user', content: 'Say hello.' }],
        stream: true,
      },
    } as const;
    for (const [format, request] of Object.entries(requests)) {
      const sellerProtocol = protocolOfFormat(format as ApiFormat);
      const json = structuredClone(request) as unknown as Record<string, unknown>;
      const sse = (await demoAnswer(sellerProtocol, MODEL, json, 100)).parts.join('');
      // What the buyer's usage scanner keeps: the data of each JSON event.
      const events = new SseDecoder()
        .push(sse)
        .map((event) => event.data)
        .filter((data) => data.startsWith('{'));
      const delivered = {
        ...answer(json, bytes(json)),
        answer: () => ({ sellerProtocol, events }),
      };
      const replay = replayOf(delivered, 'svc') as Replay;
      const text = answerText(format as ApiFormat, sse, true).text;
      expect(text.length).toBeGreaterThan(10);
      expect(replay.audited.text).toBe(comparableText(text));
    }
  });

  it('does not replay what a reference cannot answer as the seller did', () => {
    const cases: Record<string, unknown>[] = [
      { model: 'm', input: 'hi', previous_response_id: 'resp_1' },
      { model: 'm', input: [{ type: 'item_reference', id: 'msg_1' }] },
      { model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f_1' }] }] },
      { model: 'm', input: [{ type: 'reasoning', encrypted_content: 'xyz' }] },
    ];
    for (const body of cases)
      expect(replayOf(answer(body, bytes(body)), 'svc')).toBeTypeOf('string');
    expect(replayOf(answer({ model: 'm', input: 'hi' }), 'svc')).toBe(
      'the request bytes were not kept',
    );
  });
});
