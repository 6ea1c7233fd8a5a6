/**
 * The request ids of audits (docs/decisions/223-key-order-and-id-time.md): a gateway makes its
 * keys' ids before their reservation and the hop to the buyer, so the time such an id holds is a
 * little before the request reaches the buyer. An audit copying (or replaying) such a request
 * reaches the seller with an id made as long before it reached the buyer, so a seller comparing
 * the id's time with the request's arrival sees the same lags for audits as for the traffic.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { newRequestId, requestIdAge } from '../protocol/index.js';
import { waitFor } from '../testing/index.js';
import type { BuyerPayments } from './payments.js';
import { chatCompletion } from './testing/sellerReplies.js';
import { startTestBuyer, type TestBuyer } from './testing/testBuyer.js';

let t: TestBuyer | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const SECRET = 'cd'.repeat(32);
/** How long before each request reached the buyer the gateway made its id (ms). */
const LAGS = [3, 7, 12];
const question = (i: number) => ({ type: 'text', text: `Question ${i}: what is a ledger for?` });
const IMAGE = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } };

describe('audit request ids', () => {
  it.each([
    ['probes', false, false],
    ['replays', true, false],
    ['probes of requests that make no shape (an image)', false, true],
  ])(
    '%s carry ids as old, at the buyer, as the gateway’s ids of the requests they copy',
    async (_, realAnswers, image) => {
      // The buyer's clock stands still: the lags it reads are exactly the ones the gateway made.
      const now = Date.now();
      const paid: { requestId: string; peerId: string }[] = [];
      const payments: BuyerPayments = {
        prepare: async ({ requestId, peerId }) => {
          paid.push({ requestId, peerId });
          return undefined;
        },
        complete: async () => undefined,
      };
      t = await startTestBuyer({
        payments,
        clock: () => now,
        config: {
          audit: {
            enabled: true,
            sampleRate: 1,
            dailyBudgetUsd: 10,
            maxShareOfSpend: 100,
            maxDelayMs: 50,
            realAnswers,
          },
        },
      });
      mkdirSync(join(t.dataDir, 'gateway'), { recursive: true });
      writeFileSync(join(t.dataDir, 'gateway', 'control.secret'), SECRET, { mode: 0o600 });
      const sellers: string[] = [];
      for (const name of ['s1', 's2', 's3', 's4']) {
        const peerId = t.network.addSeller(
          {
            peerId: name,
            services: [
              { id: 'gpt-4o', pricing: { inputUsdPerMillion: 1, outputUsdPerMillion: 4 } },
            ],
          },
          (call) => chatCompletion(call, `hi from ${name}`),
        );
        sellers.push(peerId);
      }
      const sent = new Set<string>();
      for (let i = 0; i < 6; i++) {
        const requestId = newRequestId(now - LAGS[i % LAGS.length]!);
        sent.add(requestId);
        const response = await fetch(`${t.url}/v1/chat/completions`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-svc-gateway-auth': SECRET,
            'x-svc-buyer-identity': 'ws_team',
            'x-svc-request-id': requestId,
          },
          body: JSON.stringify({
            model: 'gpt-4o',
            messages: [{ role: 'user', content: image ? [IMAGE, question(i)] : question(i).text }],
          }),
        });
        expect(response.status).toBe(200);
        await response.text();
      }
      const audits = () => paid.filter(({ requestId }) => !sent.has(requestId));
      await waitFor(() => audits().length >= 6, 10_000, 'audit requests');
      await t.buyer.service.audits.idle();
      // A replay carries the user's words; a probe new ones.
      const asked = sellers
        .flatMap((peerId) => t!.network.callsTo(peerId))
        .filter((call) => JSON.stringify(call.json.messages).includes('Question'));
      expect(asked.length > sent.size).toBe(realAnswers);
      // The age asked for stays inside the buyer, like every x-svc-* header.
      for (const call of sellers.flatMap((peerId) => t!.network.callsTo(peerId))) {
        expect(
          Object.keys(call.request.headers).filter((name) => name.startsWith('x-svc')),
        ).toEqual([]);
      }
      for (const { requestId } of paid) {
        // Every id has the one form, and stands one of the gateway's lags before the buyer's now.
        expect(LAGS).toContain(requestIdAge(requestId, now));
      }
    },
  );
});
