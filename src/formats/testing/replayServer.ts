/** A loopback HTTP server that replays one prepared answer (JSON or SSE) to whatever is asked. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatSse, type SseEvent } from '../sse.js';

export type Replay =
  | { kind: 'json'; status: number; body: unknown }
  | { kind: 'sse'; events: SseEvent[] | AsyncIterable<SseEvent> };

export interface ReplayServer {
  url: string;
  /** The answer for the next requests. */
  next: Replay;
  /** Bodies of the requests received, newest last. */
  requests: unknown[];
  close(): Promise<void>;
}

/** Starts a replay server on 127.0.0.1, port 0. */
export async function startReplayServer(): Promise<ReplayServer> {
  const state: ReplayServer = {
    url: '',
    next: { kind: 'json', status: 500, body: {} },
    requests: [],
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const text = Buffer.concat(chunks).toString('utf8');
      state.requests.push(text ? JSON.parse(text) : undefined);
      const next = state.next;
      if (next.kind === 'json') {
        res.writeHead(next.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(next.body));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for await (const event of next.events) res.write(formatSse(event));
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  state.url = `http://127.0.0.1:${port}`;
  state.close = () =>
    new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((err) => (err ? reject(err) : resolve()));
    });
  return state;
}
