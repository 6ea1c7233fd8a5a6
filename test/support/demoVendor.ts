/**
 * A stand-in vendor that speaks one API format and answers with the demo model
 * (src/seller/demo), or with JSON fitting the schema when asked for structured output
 * (test/support/structuredAnswer.ts): an upstream for a seller that offers only that format, so a
 * client's loop crosses format translation in the buyer.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiProtocol } from '../../src/network/index.js';
import { demoAnswer } from '../../src/seller/index.js';
import { structuredAnswer } from './structuredAnswer.js';

export interface DemoVendor {
  /** API root including /v1, as a seller's provider `baseUrl`. */
  baseUrl: string;
  /** How many requests it answered. */
  requests: number;
  /** The bodies it received, oldest first. */
  received: Record<string, unknown>[];
  close(): Promise<void>;
}

const PATHS: Record<string, ApiProtocol> = {
  '/v1/chat/completions': 'openai-chat-completions',
  '/v1/responses': 'openai-responses',
  '/v1/messages': 'anthropic-messages',
};

/** Starts a vendor on a free loopback port that serves only `protocol`. */
export async function startDemoVendor(protocol: ApiProtocol): Promise<DemoVendor> {
  const vendor: DemoVendor = { baseUrl: '', requests: 0, received: [], close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const path = (req.url ?? '').split('?')[0]!;
      if (req.method !== 'POST' || PATHS[path] !== protocol) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not here"}');
        return;
      }
      vendor.requests++;
      const raw = Buffer.concat(chunks);
      const body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      vendor.received.push(body);
      // The demo model has no structured output: a request for it gets JSON fitting its schema.
      const structured = structuredAnswer(protocol, body);
      if (structured) {
        res.writeHead(200, { 'content-type': structured.contentType }).end(structured.body);
        return;
      }
      const answer = await demoAnswer(protocol, String(body.model), body, raw.byteLength);
      res.writeHead(answer.status, { 'content-type': answer.contentType });
      res.end(answer.parts.join(''));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  vendor.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  vendor.close = () => new Promise((resolve) => server.close(() => resolve()));
  return vendor;
}
