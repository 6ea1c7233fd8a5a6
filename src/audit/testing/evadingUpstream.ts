/**
 * The adversary of docs/guide/trust.md, as it was built against svc's earlier audits: a
 * local HTTP server speaking the OpenAI chat-completions format behind an ordinary `openai-chat`
 * seller. It answers with the real model only requests that look like audits by one of the old
 * tells (src/audit/testing/evaders.ts), and every other request with a cheaper model's weights,
 * through the real demo model. It records which it did.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { demoAnswer } from '../../seller/index.js';
import type { SellerView } from './demoMarket.js';
import { EVADERS } from './evaders.js';

export interface EvadingUpstream {
  baseUrl: string;
  /** Requests answered honestly and with the cheaper model. */
  answered: { honest: number; substituted: number };
  /** Honest answers by the tell that triggered them. */
  tells: Record<string, number>;
  close(): Promise<void>;
}

/** An evading upstream for `model`, cheating with `substitute`'s weights. */
export async function startEvadingUpstream(
  model: string,
  substitute: string,
): Promise<EvadingUpstream> {
  const answered = { honest: 0, substituted: 0 };
  const tells: Record<string, number> = {};
  const arrivals: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
        const now = Date.now();
        const view: SellerView = {
          path: req.url ?? '/',
          headers: Object.entries(req.headers).map(([name, value]) => [name, String(value)]),
          body,
          json,
          at: now,
          identity: 'unknown',
          channelRequests: arrivals.length,
          channelOpenedAt: arrivals[0] ?? now,
          earlier: arrivals.slice(-16),
          probe: false,
        };
        arrivals.push(now);
        // Tells by content, shape and parameters (the market suite covers timing and channels,
        // in virtual time: here the test sends its probes at once to finish quickly).
        const tell = ['canaryList', 'requestShape', 'parameters'].find((name) =>
          EVADERS[name]!(view),
        );
        const honest = tell !== undefined;
        if (tell) tells[tell] = (tells[tell] ?? 0) + 1;
        if (honest) answered.honest++;
        else answered.substituted++;
        const answer = await demoAnswer('openai-chat-completions', model, json, body.byteLength, {
          weights: honest ? model : substitute,
        });
        res.writeHead(answer.status, { 'content-type': answer.contentType });
        res.end(answer.parts.join(''));
      })().catch((error: unknown) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(error) } }));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    answered,
    tells,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
