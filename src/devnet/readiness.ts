/** The checks `svc up` makes once every component runs: discovery, then one real request. */
import { SVC_HEADER } from '../protocol/index.js';
import type { DevKey } from './devKey.js';
import { waitFor } from './waitFor.js';

/** Waits until the buyer has discovered every seller (bounded). */
export async function waitForSellers(
  buyerUrl: string,
  count: number,
  print: (line: string) => void,
): Promise<void> {
  await waitFor(
    async () => {
      await fetch(`${buyerUrl}/_svc/peers/refresh`, { method: 'POST' }).then((r) =>
        r.body?.cancel(),
      );
      const status = (await (await fetch(`${buyerUrl}/_svc/status`)).json()) as {
        reachablePeerCount?: number;
      };
      return (status.reachablePeerCount ?? 0) >= count;
    },
    { timeoutMs: 30_000, intervalMs: 500, what: `discovery of ${count} sellers by the buyer` },
  );
  print(`  ready    discovery: the buyer sees all ${count} sellers`);
}

/** One request through the gateway, to show the whole path working (never fatal). */
export async function smokeTest(
  gatewayUrl: string,
  key: DevKey,
  print: (line: string) => void,
): Promise<void> {
  try {
    const response = await fetch(`${gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'svc-demo-fast',
        messages: [{ role: 'user', content: 'Say hello to svc.' }],
      }),
    });
    const body = (await response.json()) as { error?: { message?: string } };
    if (response.ok) {
      const peer = response.headers.get(SVC_HEADER.peerId);
      const cost = response.headers.get(SVC_HEADER.estimatedCostUsd);
      print(`  check    a request through the gateway was served by ${peer} for ${cost} USD`);
    } else {
      print(
        `  check    a request through the gateway failed: ${response.status} ${body.error?.message ?? ''}`,
      );
    }
  } catch (error) {
    print(`  check    a request through the gateway failed: ${(error as Error).message}`);
  }
}
