/**
 * A real libp2p seller for buyer integration tests: signed metadata announced on the DHT, and a
 * `/svc/request/1` handler that relays to a fake upstream HTTP server (the only faked part).
 */
import { peerIdFromAddress } from '../../identity/index.js';
import type { TokenPricing } from '../../money/index.js';
import {
  type Announcer,
  type ApiProtocol,
  encodeMetadata,
  type RequestServer,
  type SvcNode,
  serveRequests,
  signMetadata,
  startAnnouncing,
} from '../../network/index.js';
import { startLoopbackNode, type TestIdentity } from '../../network/testing/loopback.js';

export interface LibP2pSeller {
  node: SvcNode & { identity: TestIdentity };
  peerId: string;
  stop(): Promise<void>;
}

export interface LibP2pSellerOptions {
  bootstrap: string;
  upstreamUrl: string;
  services: string[];
  pricing: TokenPricing;
  protocols?: ApiProtocol[];
}

/** Starts a seller node that relays every request to `upstreamUrl`. */
export async function startLibP2pSeller(options: LibP2pSellerOptions): Promise<LibP2pSeller> {
  const node = await startLoopbackNode('seller', { bootstrap: [options.bootstrap] });
  const record = await signMetadata(
    {
      peerId: peerIdFromAddress(node.identity.account.address),
      version: 1,
      displayName: `test seller ${node.peerId.slice(0, 6)}`,
      providers: [
        {
          provider: 'openai-chat',
          services: options.services,
          defaultPricing: options.pricing,
          serviceApiProtocols: Object.fromEntries(
            options.services.map((id) => [id, options.protocols ?? ['openai-chat-completions']]),
          ),
          maxConcurrency: 8,
          currentLoad: 0,
        },
      ],
      capabilities: { uploadLimitBytes: 1024 * 1024 },
      timestamp: Date.now(),
    },
    node.identity.account,
  );
  const bytes = encodeMetadata(record);
  const announcer: Announcer = await startAnnouncing(node, () => bytes);
  const server: RequestServer = await serveRequests(
    node,
    async (request) => {
      const response = await fetch(`${options.upstreamUrl}${request.path}`, {
        method: request.method,
        headers: { 'content-type': 'application/json' },
        body: Buffer.from(request.body),
        signal: request.signal,
      });
      const body = response.body;
      return {
        status: response.status,
        headers: { 'content-type': response.headers.get('content-type') ?? 'application/json' },
        ...(body
          ? {
              body: (async function* () {
                for await (const chunk of body) yield chunk as Uint8Array;
              })(),
            }
          : {}),
      };
    },
    { uploadLimitBytes: () => 1024 * 1024 },
  );
  return {
    node,
    peerId: node.peerId,
    stop: async () => {
      await server.stop();
      await announcer.stop();
      await node.stop();
    },
  };
}
