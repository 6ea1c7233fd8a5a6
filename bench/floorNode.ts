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
 *   logs (target "floor chain");
 * - `floorNode.ts tcpseller <upstream url>` and `tcpbuyer <port>`: the same two processes with
 *   plain TCP between them instead of libp2p (no Noise, no yamux, one connection per request
 *   in flight, svc's frames): what the process hops and HTTP cost without libp2p (target
 *   "TCP floor").
 *
 * What the full svc path adds over this floor is svc's request handling; what the floor adds
 * over direct is the process hops, HTTP and libp2p themselves.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, connect, createServer as createTcpServer, type Socket } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { peerIdFromString } from '@libp2p/peer-id';
import { multiaddr } from '@multiformats/multiaddr';
import { request } from 'undici';
import { generatePrivateKey } from 'viem/accounts';
import type { PeerId } from '../src/identity/index.js';
import type { FrameTypeValue } from '../src/network/frames.js';
import type { InboundRequest } from '../src/network/index.js';

/**
 * svc's modules load from `BENCH_SVC_MODULES`: the built `dist/` when the compare bench runs svc
 * compiled, as its own processes then run, else the sources (bench/installed.ts).
 */
const modules = pathToFileURL(
  `${process.env.BENCH_SVC_MODULES ?? fileURLToPath(new URL('../src', import.meta.url))}/`,
);
const load = async <T>(path: string) => (await import(new URL(path, modules).href)) as T;
const { createSvcNode, LibP2pTransport, serveRequests } =
  await load<typeof import('../src/network/index.js')>('network/index.js');
const { encodeFrame, FrameType } =
  await load<typeof import('../src/network/frames.js')>('network/frames.js');
const { defaultConfig } = await load<typeof import('../src/config/index.js')>('config/index.js');

/** A node with a fresh key listening on loopback. */
function startLoopbackNode(role: 'seller' | 'buyer') {
  return createSvcNode({
    identity: { privateKey: generatePrivateKey() },
    role,
    config: { ...defaultConfig().network, listen: ['/ip4/127.0.0.1/tcp/0'] },
  });
}

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

/** Calls `onFrame` with each svc frame (type byte, 4-byte length, payload) read from `socket`. */
function readFrames(socket: Socket, onFrame: (type: number, payload: Buffer) => void): void {
  let pending: Buffer = Buffer.alloc(0);
  socket.on('data', (data: Buffer) => {
    pending = pending.byteLength === 0 ? data : Buffer.concat([pending, data]);
    while (pending.byteLength >= 5) {
      const length = pending.readUInt32BE(1);
      if (pending.byteLength < 5 + length) break;
      onFrame(pending[0]!, pending.subarray(5, 5 + length));
      pending = pending.subarray(5 + length);
    }
  });
}

function sendFrames(socket: Socket, frames: Array<[FrameTypeValue, Uint8Array]>): void {
  socket.cork();
  for (const [type, payload] of frames) socket.write(encodeFrame(type, payload));
  socket.uncork();
}

const text = (value: string) => Buffer.from(value);

/** Per request on one connection: head (path), data (body), end; answered head, data…, end. */
async function tcpSeller(upstreamUrl: string): Promise<void> {
  const server = createTcpServer((socket) => {
    socket.setNoDelay(true);
    let path = '/';
    readFrames(socket, (type, payload) => {
      if (type === FrameType.head) path = payload.toString();
      if (type !== FrameType.data) return;
      request(`${upstreamUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: payload,
      })
        .then(async (answer) => {
          const type = String(answer.headers['content-type'] ?? 'application/json');
          sendFrames(socket, [[FrameType.head, text(type)]]);
          for await (const chunk of answer.body) sendFrames(socket, [[FrameType.data, chunk]]);
          sendFrames(socket, [[FrameType.end, new Uint8Array(0)]]);
        })
        .catch((error: unknown) => socket.destroy(error as Error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  console.log(JSON.stringify({ port: (server.address() as AddressInfo).port }));
}

interface Exchange {
  head(type: string): void;
  data(chunk: Buffer): void;
  end(): void;
}

async function tcpBuyer(port: number): Promise<void> {
  const idle: Socket[] = [];
  const exchanges = new Map<Socket, Exchange>();
  const open = () => {
    const socket = connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    readFrames(socket, (type, payload) => {
      const exchange = exchanges.get(socket);
      if (type === FrameType.head) exchange?.head(payload.toString());
      else if (type === FrameType.data) exchange?.data(payload);
      else if (type === FrameType.end) exchange?.end();
    });
    return socket;
  };
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const socket = idle.pop() ?? open();
    const chunks: Buffer[] = [];
    let streamed = false;
    await new Promise<void>((resolve) => {
      exchanges.set(socket, {
        head(type) {
          streamed = type.startsWith('text/event-stream');
          if (streamed) res.writeHead(200, { 'content-type': type });
        },
        data(chunk) {
          if (streamed) res.write(chunk);
          else chunks.push(Buffer.from(chunk));
        },
        end: resolve,
      });
      sendFrames(socket, [
        [FrameType.head, text(req.url ?? '/')],
        [FrameType.data, body],
      ]);
    });
    exchanges.delete(socket);
    idle.push(socket);
    if (streamed) {
      res.end();
      return;
    }
    const bytes = Buffer.concat(chunks);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.byteLength });
    res.end(bytes);
  });
  await listen(server);
}

// A normal exit on SIGTERM (bench/lib.ts stops children so), so `--cpu-prof` writes its profile.
process.once('SIGTERM', () => process.exit(0));
const [role, target] = process.argv.slice(2);
if (role === 'seller') await seller(target!);
else if (role === 'buyer') await buyer(target!);
else if (role === 'proxy') await proxy(target!);
else if (role === 'tcpseller') await tcpSeller(target!);
else if (role === 'tcpbuyer') await tcpBuyer(Number(target));
else throw new Error('usage: floorNode.ts seller|tcpseller <upstream url> | buyer <multiaddr>');
