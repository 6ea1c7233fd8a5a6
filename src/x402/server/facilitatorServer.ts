/**
 * HTTP face of a facilitator, the routes every x402 facilitator serves:
 * `POST /verify`, `POST /settle` (body `{x402Version, paymentPayload, paymentRequirements}`,
 * answer the VerifyResponse / SettleResponse JSON) and `GET /supported`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { z } from 'zod';
import { errorMessage } from '../../errors/index.js';
import { boundIngress } from '../../http/index.js';
import type { Logger } from '../../log/index.js';

const MAX_BODY_BYTES = 256 * 1024;

const requestSchema = z.object({
  x402Version: z.number().optional(),
  paymentPayload: z
    .object({
      x402Version: z.number(),
      accepted: z.record(z.string(), z.unknown()),
      payload: z.record(z.string(), z.unknown()),
    })
    .passthrough(),
  paymentRequirements: z
    .object({
      scheme: z.string(),
      network: z.string(),
      asset: z.string(),
      amount: z.string(),
      payTo: z.string(),
    })
    .passthrough(),
});

export interface FacilitatorServerOptions {
  facilitator: x402Facilitator;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  logger?: Logger;
}

export interface RunningFacilitatorServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** Starts listening; resolves once the port is bound. */
export async function startFacilitatorServer(
  options: FacilitatorServerOptions,
): Promise<RunningFacilitatorServer> {
  const server = createServer((request, response) => {
    route(options, request, response).catch((error: unknown) => {
      options.logger?.error({ err: error }, 'facilitator request failed');
      send(response, 500, { error: errorMessage(error) });
    });
  });
  // Explicit: a slow client holds a slot at most this long (headers 30 s, whole request 120 s).
  boundIngress(server, {
    headersTimeoutMs: 30_000,
    requestTimeoutMs: 120_000,
    keepAliveTimeoutMs: 5_000,
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port: options.port ?? 0 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function route(
  options: FacilitatorServerOptions,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const path = new URL(request.url ?? '/', 'http://x').pathname.replace(/\/+$/, '');
  if (request.method === 'GET' && path === '/supported') {
    send(response, 200, options.facilitator.getSupported());
    return;
  }
  if (path !== '/verify' && path !== '/settle') {
    send(response, 404, { error: 'Not found: use POST /verify, POST /settle or GET /supported' });
    return;
  }
  if (request.method !== 'POST') {
    send(response, 405, { error: `${path} takes POST` });
    return;
  }
  const parsed = requestSchema.safeParse(await readJson(request));
  if (!parsed.success) {
    send(response, 400, { error: 'Expected {x402Version, paymentPayload, paymentRequirements}' });
    return;
  }
  const payload = parsed.data.paymentPayload as unknown as PaymentPayload;
  const requirements = parsed.data.paymentRequirements as unknown as PaymentRequirements;
  if (path === '/verify') {
    const result = await options.facilitator.verify(payload, requirements);
    options.logger?.debug({ isValid: result.isValid, reason: result.invalidReason }, 'verify');
    send(response, 200, result);
    return;
  }
  const result = await options.facilitator.settle(payload, requirements);
  options.logger?.info(
    { success: result.success, reason: result.errorReason, transaction: result.transaction },
    'settle',
  );
  send(response, 200, result);
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

function send(response: ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) return;
  const text = JSON.stringify(body, (_key, value) =>
    typeof value === 'bigint' ? value.toString() : value,
  );
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(text);
}
