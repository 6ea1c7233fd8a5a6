/** Local control plane: status, peers, refresh, request records, metrics. */
import type { ServerResponse } from 'node:http';
import { offersOfPeer } from '../catalog/index.js';
import { SvcError } from '../errors/index.js';
import { jsonArrayPieces, sendJson, sendJsonPieces } from '../http/index.js';
import type { KnownPeer } from '../network/index.js';
import { JOURNAL_SINCE_HEADER, REQUEST_RECORD_PATH } from '../protocol/index.js';
import type { BuyerService } from './BuyerService.js';

/** `GET /_svc/status` */
export function statusBody(service: BuyerService, url: string): Record<string, unknown> {
  const { deps } = service;
  const network = deps.directory.status();
  // The libp2p directory can say more about reachability (connections, why none).
  const directory = deps.directory as {
    health?: () => { status: string; message: string; connections: number };
  };
  const health = typeof directory.health === 'function' ? directory.health() : undefined;
  return {
    version: deps.version,
    url,
    dataDir: deps.dataDir,
    uptimeSeconds: Math.floor((deps.clock() - service.startedAt) / 1000),
    dhtNodeCount: network.dhtNodeCount,
    peerCount: network.peerCount,
    reachablePeerCount: network.reachablePeerCount,
    lastRefreshAt: network.lastRefreshAt ?? null,
    reachability:
      network.reachablePeerCount > 0
        ? 'online'
        : network.dhtNodeCount > 0
          ? 'no-sellers'
          : 'offline',
    ...(health ? { network: health } : {}),
  };
}

function roundOrNull(value: number | undefined): number | null {
  return value === undefined ? null : Math.round(value * 10) / 10;
}

/**
 * `GET /_svc/peers`, `{"peers":[…],"total":n}`, one peer at a time: with many sellers the whole
 * list never exists at once (docs/decisions/155-buyer-memory-with-many-peers.md).
 */
function peersPieces(service: BuyerService): Generator<string> {
  const list = service.deps.directory.list();
  const entries = (function* () {
    for (const peer of list) yield peerEntry(service, peer);
  })();
  return jsonArrayPieces('{"peers":[', entries, `],"total":${list.length}}`);
}

function peerEntry(service: BuyerService, peer: KnownPeer): Record<string, unknown> {
  const { deps } = service;
  const peerId = peer.metadata.peerId;
  // The signed record itself (so `svc network browse` can use this list as its source),
  // plus what the buyer knows about the peer.
  return {
    ...peer.metadata,
    region: peer.metadata.region ?? null,
    reachable: peer.reachable,
    lastSeenAt: peer.lastSeenAt,
    lastError: peer.lastError ?? null,
    reputationScore: deps.reputation.score(peerId) ?? null,
    reputation: {
      score: deps.reputation.score(peerId) ?? null,
      volumeUsd: null,
      sessions: null,
      ...deps.reputation.details?.(peerId),
    },
    recentFailures: service.health.totalFailures(peerId),
    coolingDown: service.health.coolingDown(peerId),
    offers: offersOfPeer(peer).map((offer) => ({
      provider: offer.provider,
      serviceId: offer.serviceId,
      model: offer.modelName,
      aliases: offer.aliases,
      type: offer.type,
      protocols: offer.protocols,
      prices: { ...offer.pricing, ...(offer.unitBilling ?? {}) },
      // Measured by this buyer (docs/decisions/150-routing-by-speed.md); null until measured.
      ttftMs: roundOrNull(service.speed.speed(peerId, offer.modelKey)?.ttftMs),
      outputTokensPerSecond: roundOrNull(
        service.speed.speed(peerId, offer.modelKey)?.outputTokensPerSecond,
      ),
      // This buyer's audit verdict with its evidence (docs/guide/trust.md); null until audited.
      audit: service.audits.standing(peerId, offer.modelKey) ?? null,
    })),
  };
}

/** Serves `/_svc/*` and `/metrics`; false when the path is not one of them. */
export async function handleControl(
  service: BuyerService,
  method: string,
  path: string,
  res: ServerResponse,
  url: string,
): Promise<boolean> {
  if (method === 'GET' && path === '/_svc/status') {
    sendJson(res, 200, statusBody(service, url));
    return true;
  }
  if (method === 'GET' && path === '/_svc/peers') {
    sendJsonPieces(res, 200, peersPieces(service));
    return true;
  }
  if (method === 'GET' && path === '/_svc/channels') {
    const channels = await service.deps.channels();
    const body = JSON.stringify({ channels }, (_key, value) =>
      typeof value === 'bigint' ? value.toString() : value,
    );
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
    return true;
  }
  if (method === 'POST' && path === '/_svc/peers/refresh') {
    await service.deps.directory.refresh();
    service.invalidateOffers();
    sendJson(res, 200, statusBody(service, url));
    return true;
  }
  if (method === 'GET' && path.startsWith(REQUEST_RECORD_PATH)) {
    const id = decodeURIComponent(path.slice(REQUEST_RECORD_PATH.length));
    const record = service.records.get(id);
    if (!record) {
      throw new SvcError('not_found', {
        status: 404,
        message: `No request ${id} in this buyer's journal.`,
        details: { requestId: id },
        headers: { [JOURNAL_SINCE_HEADER]: String(service.records.journalSinceMs) },
      });
    }
    sendJson(res, 200, record);
    return true;
  }
  if (method === 'GET' && path === '/metrics') {
    const text = await service.metrics.registry.metrics();
    res.writeHead(200, { 'content-type': service.metrics.registry.contentType });
    res.end(text);
    return true;
  }
  return false;
}
