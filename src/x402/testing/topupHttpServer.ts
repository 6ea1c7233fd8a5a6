/**
 * A minimal HTTP face for TopupService (bearer -> key map), standing in for the gateway route
 * in tests of the x402 client side. The gateway's real route does the same with its own auth.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PAYMENT_SIGNATURE_HEADER } from '../constants.js';
import type { TopupService } from '../TopupService.js';
import type { TopupKey } from '../types.js';

export interface TopupHttpServer {
  url: string;
  close(): Promise<void>;
}

export async function startTopupHttpServer(
  service: TopupService,
  keys: Record<string, TopupKey>,
): Promise<TopupHttpServer> {
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    const key = bearer ? keys[bearer] : undefined;
    if (request.method !== 'POST' || request.url !== '/v1/key/topup' || !key) {
      response.writeHead(key ? 404 : 401).end();
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = undefined;
    }
    const signature = request.headers[PAYMENT_SIGNATURE_HEADER.toLowerCase()];
    const reply = await service.handle({
      key,
      body,
      paymentSignature: typeof signature === 'string' ? signature : undefined,
      resourceUrl: `http://${request.headers.host}/v1/key/topup`,
    });
    response.writeHead(reply.status, reply.headers).end(JSON.stringify(reply.body));
  });
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
