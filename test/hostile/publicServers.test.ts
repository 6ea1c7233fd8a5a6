/**
 * Hostile input at the other public HTTP servers (the indexer's /stats, the tunnel relay, the
 * x402 facilitator): what Node's HTTP parser refuses — a header flood, smuggled Content-Length +
 * Transfer-Encoding framing, a malformed request line — is answered with one JSON error from the
 * error table (not a bare status line), and the server goes on answering others.
 */
import { generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/index.js';
import { encodeSnapshot } from '../../src/indexer/encodedSnapshot.js';
import { type IndexerHttpServer, startIndexerHttp } from '../../src/indexer/httpServer.js';
import { IndexerMetrics } from '../../src/indexer/IndexerMetrics.js';
import { createRateLimiter } from '../../src/indexer/rateLimit.js';
import { startTunnelRelayNode, type TunnelRelayNode } from '../../src/node/index.js';
import {
  type RunningFacilitatorServer,
  startFacilitatorServer,
} from '../../src/x402/server/facilitatorServer.js';
import { createLocalFacilitator } from '../../src/x402/server/localFacilitator.js';
import { postBytes, rawRequest } from './rawHttp.js';

let indexer: IndexerHttpServer;
let relay: TunnelRelayNode;
let facilitator: RunningFacilitatorServer;

beforeAll(async () => {
  const snapshot = await encodeSnapshot('{"peers":[],"updatedAt":1}', 1_700_000_000_000);
  indexer = await startIndexerHttp({
    host: '127.0.0.1',
    port: 0,
    current: () => snapshot,
    health: () => ({ ok: true }),
    metrics: new IndexerMetrics(),
    limiter: createRateLimiter(0),
    maxAgeSeconds: 120,
  });
  relay = await startTunnelRelayNode({
    publicUrl: 'https://tunnel.example.test',
    host: '127.0.0.1',
    port: 0,
    network: configSchema.parse({ network: { listen: ['/ip4/127.0.0.1/tcp/0'] } }).network,
    privateKey: generatePrivateKey(),
    bodyLimitBytes: 64 * 1024,
    maxStreamsPerGateway: 2,
    trustedProxies: [],
  });
  // The chain is never reached: only the HTTP face is under test (nothing listens on port 9).
  const local = createLocalFacilitator({
    rpcUrl: 'http://127.0.0.1:9',
    chainId: 31337,
    privateKey: generatePrivateKey(),
  });
  facilitator = await startFacilitatorServer({ facilitator: local.facilitator });
});

afterAll(async () => {
  await indexer?.close();
  await relay?.stop();
  await facilitator?.close();
});

/** Each server, and a request that shows it still answers others. */
const SERVERS = [
  ['indexer', () => indexer.url, '/stats', 200],
  ['tunnel relay', () => relay.url, '/nowhere', 404],
  ['x402 facilitator', () => facilitator.url, '/supported', 200],
] as const;

const FLOOD = Array.from({ length: 3_000 }, (_, i) => `x-f-${i}: ${'z'.repeat(16)}\r\n`).join('');
const SMUGGLED =
  'POST /verify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
  'Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n' +
  'GET /stats HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

describe.each(SERVERS)('%s: requests the HTTP parser refuses', (_name, url, alive, status) => {
  async function refused(payload: Buffer | string, expected: number, code: string) {
    const response = await rawRequest(url(), payload, { timeoutMs: 5_000 });
    expect([response.status, response.code]).toEqual([expected, code]);
    expect(response.headers['content-type']).toBe('application/json');
    const other = await fetch(`${url()}${alive}`);
    await other.arrayBuffer();
    expect(other.status).toBe(status);
  }

  it('a header flood is 431 headers_too_large', async () => {
    await refused(postBytes('/verify', '{}', FLOOD), 431, 'headers_too_large');
  });

  it('Content-Length with Transfer-Encoding is 400 invalid_request', async () => {
    await refused(SMUGGLED, 400, 'invalid_request');
  });

  it('a malformed request line is 400 invalid_request', async () => {
    await refused('GET /stats HTTP/9\x00\r\n\r\n', 400, 'invalid_request');
  });
});
