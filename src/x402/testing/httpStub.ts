/** A tiny loopback HTTP server for facilitator fault tests (hangs, errors, relays). */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StubServer {
  url: string;
  /** Requests seen, by path. */
  calls: string[];
  close(): Promise<void>;
}

export type StubHandler = (
  path: string,
  body: string,
  response: ServerResponse,
  request: IncomingMessage,
) => void | Promise<void>;

export async function startStubServer(handler: StubHandler): Promise<StubServer> {
  const calls: string[] = [];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    calls.push(path);
    await handler(path, Buffer.concat(chunks).toString('utf8'), response, request);
  });
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
