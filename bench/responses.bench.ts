/**
 * `npm run bench -- responses`: the buyer's CPU for Responses API state
 * (docs/decisions/173-responses-state-kept-by-the-buyer.md), measured in this process on the
 * code the request path runs, so the machine's other load hardly moves it:
 *
 * - keeping a response: the request's state, `remember` after the answer, and the batched write
 *   to `<data-dir>/buyer/responses.sqlite` (64 to a transaction), for 1 KB in and 1 KB out;
 * - `store: false`: the same request, nothing kept;
 * - a `previous_response_id` follow-up: the lookup and the expansion of a one-link chain.
 *
 * A chat-completions or messages request never reaches this code.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResponseStore } from '../src/buyer/responseStore.js';
import { ResponsesState } from '../src/buyer/responsesState.js';
import type { RouteCandidate } from '../src/routing/index.js';
import { printFigure } from './lib.js';

const PROMPT = 'The buyer proxy routes each request to the cheapest eligible seller. '
  .repeat(15)
  .slice(0, 1000);
const COUNT = 20_000;
/** The responses are kept in batches like the store's timer makes them. */
const BATCH = 64;

/** A seller of another format: the state is expanded for it, never passed through. */
const candidate = {
  sellerProtocol: 'openai-chat-completions',
  offer: { peerId: 'a'.repeat(40), serviceId: 'gpt-4o' },
} as unknown as RouteCandidate;

function answer(i: number) {
  return {
    id: `resp_${i}`,
    object: 'response',
    status: 'completed',
    model: 'gpt-4o',
    output: [
      {
        type: 'message',
        id: `msg_${i}`,
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'x'.repeat(1000), annotations: [] }],
      },
    ],
  };
}

/** CPU µs per iteration of `run(i)` over COUNT iterations. */
function cpuPerCall(run: (i: number) => void): number {
  const before = process.cpuUsage();
  for (let i = 0; i < COUNT; i++) run(i);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / COUNT;
}

export default async function responsesBench(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-responses-'));
  const store = new ResponseStore(dir, { maxBytes: 256 << 20, maxAgeMs: 30 * 86_400_000 });
  try {
    const keep = (offset: number) => (i: number) => {
      const state = new ResponsesState(store, 'default', { model: 'm', input: PROMPT }, Date.now);
      state.remember(candidate, answer(offset + i));
      if (i % BATCH === BATCH - 1) store.flush();
    };
    cpuPerCall(keep(COUNT)); // warm-up (other ids)
    store.flush();
    const keptUs = cpuPerCall(keep(0));
    store.flush();
    const unkeptUs = cpuPerCall((i) => {
      const body = { model: 'm', input: PROMPT, store: false };
      new ResponsesState(store, 'default', body, Date.now).remember(candidate, answer(i));
    });
    const followUpUs = cpuPerCall((i) => {
      const body = { model: 'm', input: 'And then?', previous_response_id: `resp_${i}` };
      new ResponsesState(store, 'default', body, Date.now).bodyFor(candidate, body);
    });
    printFigure('keeping a response (1 KB in, 1 KB out)', keptUs, 'µs');
    printFigure('a store: false request', unkeptUs, 'µs');
    printFigure('previous_response_id, one link expanded', followUpUs, 'µs');
    return { count: COUNT, keptUs, unkeptUs, followUpUs };
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
