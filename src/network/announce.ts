/**
 * Seller side of discovery: serve the signed record on `/svc/meta/1` and `provide` the
 * well-known sellers key on the DHT, again on a timer (provider records expire) and whenever
 * a new connection comes up while the last attempt failed.
 */
import { serveMetadata } from './metaProtocol.js';
import type { SvcNode } from './node.js';
import { META_PROTOCOL, sellersDhtKey } from './protocols.js';

export interface Announcer {
  /** Provides the key now (resolves true when at least one DHT peer stored it). */
  provideNow(): Promise<boolean>;
  stop(): Promise<void>;
}

export interface AnnounceOptions {
  /** Re-provide interval; default min(refreshIntervalSeconds, 10 min). */
  reprovideMs?: number;
}

/** Starts serving `currentRecord()` and providing the sellers key. */
export async function startAnnouncing(
  node: SvcNode,
  currentRecord: () => Uint8Array,
  options: AnnounceOptions = {},
): Promise<Announcer> {
  await serveMetadata(node, currentRecord);
  let lastOk = false;
  let running: Promise<boolean> | undefined;
  let stopped = false;
  // Stopping abandons a provide in flight (it can wait up to 30 s for DHT peers that never answer).
  const stopping = new AbortController();
  const provideNow = (): Promise<boolean> => {
    running ??= (async () => {
      if (node.libp2p.getConnections().length === 0) return false;
      try {
        await node.libp2p.contentRouting.provide(await sellersDhtKey(), {
          signal: AbortSignal.any([stopping.signal, AbortSignal.timeout(30_000)]),
        });
        lastOk = true;
      } catch (error) {
        lastOk = false;
        if (!stopped) node.logger.debug({ err: String(error) }, 'providing the sellers key failed');
      }
      return lastOk;
    })().finally(() => {
      running = undefined;
    });
    return running;
  };
  const onConnect = () => {
    if (!lastOk && !stopped) void provideNow();
  };
  node.libp2p.addEventListener('peer:identify', onConnect);
  // A node behind NAT has an address only once a relay reservation lands (decision 141): DHT
  // peers ignore a provider record without addresses, so provide again when ours change.
  let announced = node.multiaddrs().join(' ');
  const onAddresses = () => {
    const now = node.multiaddrs().join(' ');
    if (stopped || now === announced) return;
    announced = now;
    void provideNow();
  };
  node.libp2p.addEventListener('self:peer:update', onAddresses);
  const reprovideMs =
    options.reprovideMs ?? Math.min(node.config.refreshIntervalSeconds * 1000, 10 * 60_000);
  const timer = setInterval(() => void provideNow(), reprovideMs);
  timer.unref();
  void provideNow();
  return {
    provideNow,
    async stop() {
      stopped = true;
      stopping.abort();
      clearInterval(timer);
      node.libp2p.removeEventListener('peer:identify', onConnect);
      node.libp2p.removeEventListener('self:peer:update', onAddresses);
      await node.libp2p.unhandle(META_PROTOCOL).catch(() => undefined);
      await running?.catch(() => undefined);
    },
  };
}
