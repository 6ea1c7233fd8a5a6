/** `network` section: the libp2p node shared by buyers and sellers. */
import { z } from 'zod';

export const networkSchema = z.strictObject({
  /** Multiaddrs of bootstrap nodes, each ending in /p2p/<libp2p peer id>. */
  bootstrap: z
    .array(z.string().startsWith('/', 'expected a multiaddr like /ip4/1.2.3.4/tcp/4001/p2p/...'))
    .default([]),
  /** Addresses the node listens on. */
  listen: z.array(z.string().startsWith('/')).default(['/ip4/0.0.0.0/tcp/0']),
  /** Addresses announced to other peers (default: the listen addresses). */
  announce: z.array(z.string().startsWith('/')).default([]),
  /**
   * Local TCP port every outbound dial comes from, so a NAT that keeps source ports lets DCUtR
   * hole punching open a direct connection (docs/decisions/142-tcp-hole-punching-from-one-port.md). Unset: ephemeral ports.
   */
  holePunchPort: z.number().int().min(1).max(65_535).optional(),
  /** A public snapshot (`svc indexer start`) that seeds the peer cache at start; every record is still fetched from its seller. */
  indexerUrl: z.url().optional(),
  /** Private DHT protocol; not the public IPFS DHT. */
  dhtProtocol: z.string().default('/svc/kad/1.0.0'),
  /** Background refresh of the peer cache. */
  refreshIntervalSeconds: z.number().int().min(1).default(300),
  /** A peer unreachable for longer than this is dropped from the cache. */
  peerTtlSeconds: z.number().int().min(1).default(3600),
  /** A request fails with a timeout when the seller sends no response head within this. */
  requestHeadTimeoutSeconds: z.number().int().min(1).default(300),
  /**
   * An answer fails with a timeout when the buyer waits this long for the seller's next bytes
   * (the time a client takes to read does not count).
   */
  requestIdleTimeoutSeconds: z.number().int().min(1).default(300),
  /**
   * Requests share kept streams (`/svc/request/2`, decision 190): a seller serves it beside
   * `/svc/request/1` and a buyer uses it with sellers that do. false: one stream per request.
   */
  requestStreams: z.boolean().default(true),
  /** Upper bound on one request, streaming included (at least 30 min: long generations stream that long). */
  requestTotalTimeoutSeconds: z.number().int().min(1800).default(3600),
});

export type NetworkConfig = z.infer<typeof networkSchema>;
