/**
 * The floor of the buyer→seller path (`npm run bench -- compare`, target "floor"): the parts the
 * architecture fixes and nothing of svc's own request handling. Run as a child process:
 *
 * - `floorNode.ts seller <upstream url>`: an svc node serving `/svc/request/1` (svc's request
 *   server: frames, pre-negotiated stream, Noise, yamux, corked TCP) whose handler sends the
 *   body to the upstream with undici's `request`, as the seller does, and returns the answer's
 *   bytes as they are: no parsing, metering, token counting, payment or logging;
 * - `floorNode.ts buyer <seller multiaddr>`: a `node:http` server whose handler reads the body
 *   and sends it through svc's `LibP2pTransport` to that seller, answering with the bytes
 *   (streamed chunk by chunk when the seller streams): no routing, translation or records;
 * - `floorNode.ts proxy <buyer url>`: a `node:http` server in front of the floor buyer, as the
 *   gateway is in front of the buyer, forwarding with undici's `request`: no keys, budgets or
 *   logs (target "floor chain").
 *
 * What the full svc path adds over this floor is svc's request handling; what the floor adds
 * over direct is the process hops, HTTP and libp2p themselves.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { peerIdFromString } from '@libp2p/peer-id';
import { multiaddr } from '@multiformats/multiaddr';
import { request } from 'undici';
import type { PeerId } from '../src/identity/index.js';
import { type InboundRequest, LibP2pTransport, serveRequests } from '../src/network/index.js';
import { startLoopbackNode } from '../src/network/testing/loopback.js';

const UPLOAD_LIMIT = 1024 * 1024;

async function readBody(message: IncomingMessage): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of message) chunks.push(chunk as Buffer);
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

async function seller(upstreamUrl: string): Promise<void> {
  const node = await startLoopbackNode('seller');
  await serveRequests(
    node,
    async (inbound: InboundRequest) => {
      const answer = await request(`${upstreamUrl}${inbound.path}`, {
        method: 'POST',
        headers: { 'content-type': inbound.headers['content-type'] ?? 'application/json' },
        body: inbound.body,
        signal: inbound.signal,
      });
      const type = String(answer.headers['content-type'] ?? 'application/json');
      const streamed = type.startsWith('text/event-stream');
      return {
        status: answer.statusCode,
        headers: { 'content-type': type },
        body: streamed ? answer.body : new Uint8Array(await answer.body.arrayBuffer()),
        trailer: () => ({}),
      };
    },
    { uploadLimitBytes: () => UPLOAD_LIMIT },
  );
  console.log(JSON.stringify({ multiaddr: node.multiaddrs()[0] }));
}

async function buyer(sellerAddress: string): Promise<void> {
  const node = await startLoopbackNode('buyer');
  const address = multiaddr(sellerAddress);
  const libp2pPeerId = peerIdFromString(sellerAddress.split('/p2p/').pop() ?? '');
  const route = { libp2pPeerId, addresses: [address], uploadLimitBytes: UPLOAD_LIMIT };
  const transport = new LibP2pTransport({ node, router: { route: () => route } });
  const seller = '0'.repeat(40) as PeerId;
  const server = createServer(async (req, res) => {
    try {
      const body = await readBody(req);
      const answer = await transport.request(seller, {
        method: 'POST',
        path: req.url ?? '/',
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        body,
      });
      const type = answer.headers['content-type'] ?? 'application/json';
      if (type.startsWith('text/event-stream')) {
        res.writeHead(answer.status, { 'content-type': type });
        for await (const chunk of answer.body) res.write(chunk);
        res.end();
        return;
      }
      const chunks: Uint8Array[] = [];
      for await (const chunk of answer.body) chunks.push(chunk);
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      res.writeHead(answer.status, { 'content-type': type, 'content-length': bytes.byteLength });
      res.end(bytes);
    } catch (error) {
      if (res.headersSent) res.destroy(error as Error);
      else res.writeHead(502).end(String(error));
    }
  });
  await listen(server);
}

async function proxy(buyerUrl: string): Promise<void> {
  const server = createServer(async (req, res) => {
    try {
      const answer = await request(`${buyerUrl}${req.url ?? '/'}`, {
        method: 'POST',
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        body: await readBody(req),
      });
      const type = String(answer.headers['content-type'] ?? 'application/json');
      res.writeHead(answer.statusCode, { 'content-type': type });
      for await (const chunk of answer.body) res.write(chunk);
      res.end();
    } catch (error) {
      if (res.headersSent) res.destroy(error as Error);
      else res.writeHead(502).end(String(error));
    }
  });
  await listen(server);
}

async function listen(server: Server): Promise<void> {
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ url: `http://127.0.0.1:${port}` }));
}

// A normal exit on SIGTERM (bench/lib.ts stops children so), so `--cpu-prof` writes its profile.
process.once('SIGTERM', () => process.exit(0));
const [role, target] = process.argv.slice(2);
if (role === 'seller') await seller(target!);
else if (role === 'buyer') await buyer(target!);
else if (role === 'proxy') await proxy(target!);
else throw new Error('usage: floorNode.ts seller <upstream url> | buyer <multiaddr> | proxy <url>');
