/** Human output of peers: tables with prices in USD per million tokens. */
import type { TokenPricing } from '../../../money/index.js';
import {
  type BrowseResult,
  matchingServices,
  type PeerMetadata,
  servicePricing,
} from '../../../network/index.js';
import type { CliIo } from '../../io.js';
import { printTable } from '../../output.js';

/** "$0.15" / "$2.00" / "$0.000075": at least 2 decimals, at most 6, no float noise. */
export function usdPerMillion(value: number | undefined): string {
  if (value === undefined) return '-';
  const fixed = value.toFixed(6).replace(/0+$/, '');
  const [whole, fraction = ''] = fixed.split('.');
  return `$${whole}.${fraction.padEnd(2, '0')}`;
}

function prices(pricing: TokenPricing): string[] {
  return [
    usdPerMillion(pricing.inputUsdPerMillion),
    usdPerMillion(pricing.outputUsdPerMillion),
    usdPerMillion(pricing.cachedInputUsdPerMillion),
  ];
}

function age(timestamp: number): string {
  const seconds = Math.max(0, Math.round((Date.now() - timestamp) / 1000));
  return seconds < 120 ? `${seconds}s` : `${Math.round(seconds / 60)}m`;
}

/** One row per peer, or one per matching service with `services`. */
export function printBrowse(io: CliIo, result: BrowseResult, services: boolean): void {
  io.stdout(`source: ${result.source} · sort: ${result.sort} · ${result.total} peer(s) match\n`);
  if (result.total === 0) return;
  if (services) {
    const rows = result.peers.flatMap((peer) =>
      matchingServices(
        peer,
        result.filters.service ?? undefined,
        result.filters.tags ?? undefined,
      ).map(({ provider, serviceId }) => [
        peer.peerId,
        provider.provider,
        serviceId,
        ...prices(servicePricing(provider, serviceId)),
        `${provider.currentLoad}/${provider.maxConcurrency}`,
        (provider.serviceApiProtocols?.[serviceId] ?? []).join(','),
      ]),
    );
    printTable(
      io,
      ['PEER', 'PROVIDER', 'SERVICE', 'IN $/M', 'OUT $/M', 'CACHED $/M', 'LOAD', 'APIS'],
      rows,
    );
    return;
  }
  const rows = result.peers.map((peer) => {
    const all = matchingServices(
      peer,
      result.filters.service ?? undefined,
      result.filters.tags ?? undefined,
    );
    const cheapest = all
      .map(({ provider, serviceId }) => servicePricing(provider, serviceId))
      .sort(
        (a, b) =>
          a.inputUsdPerMillion +
          a.outputUsdPerMillion -
          (b.inputUsdPerMillion + b.outputUsdPerMillion),
      )[0];
    return [
      peer.peerId,
      `${peer.displayName}${peer.capabilities.demo ? ' (demo)' : ''}`,
      String(all.length),
      cheapest
        ? `${usdPerMillion(cheapest.inputUsdPerMillion)} / ${usdPerMillion(cheapest.outputUsdPerMillion)}`
        : '-',
      peer.reputation.score === null ? 'unknown' : String(peer.reputation.score),
      age(peer.timestamp),
    ];
  });
  printTable(io, ['PEER', 'NAME', 'SERVICES', 'CHEAPEST IN/OUT $/M', 'SCORE', 'SIGNED'], rows);
}

/** Everything about one peer. */
export function printPeer(io: CliIo, peer: PeerMetadata & { reachable?: boolean | null }): void {
  io.stdout(`peer       ${peer.peerId}\n`);
  io.stdout(
    `name       ${peer.displayName}${peer.capabilities.demo ? ' (demo: no real model behind it)' : ''}\n`,
  );
  if (peer.region) io.stdout(`region     ${peer.region}\n`);
  io.stdout(`signed     ${new Date(peer.timestamp).toISOString()}\n`);
  io.stdout(`upload     up to ${peer.capabilities.uploadLimitBytes} bytes\n`);
  io.stdout(
    `payments   ${peer.capabilities.payments ? `chain ${peer.capabilities.payments.chainId}, contract ${peer.capabilities.payments.paymentsContract}` : 'none (free offers only)'}\n\n`,
  );
  const rows = peer.providers.flatMap((provider) =>
    provider.services.map((serviceId) => [
      provider.provider,
      serviceId,
      ...prices(servicePricing(provider, serviceId)),
      `${provider.currentLoad}/${provider.maxConcurrency}`,
      (provider.serviceApiProtocols?.[serviceId] ?? []).join(','),
      (provider.serviceCategories?.[serviceId] ?? []).join(','),
    ]),
  );
  printTable(
    io,
    ['PROVIDER', 'SERVICE', 'IN $/M', 'OUT $/M', 'CACHED $/M', 'LOAD', 'APIS', 'TAGS'],
    rows,
  );
  printAudits(io, peer);
}

interface AuditShown {
  verdict: string;
  audits: number;
  disagreements: number;
  pValue?: number;
}

/**
 * The running buyer's audit verdicts on the peer's models (docs/guide/trust.md), when the
 * peer list came from a buyer (its `/_svc/peers` offers carry them).
 */
function printAudits(io: CliIo, peer: object): void {
  const offers = (peer as { offers?: unknown }).offers;
  if (!Array.isArray(offers)) return;
  const rows: string[][] = [];
  for (const offer of offers as { serviceId?: unknown; audit?: AuditShown | null }[]) {
    const audit = offer.audit;
    if (!audit || typeof offer.serviceId !== 'string') continue;
    rows.push([
      offer.serviceId,
      audit.verdict,
      String(audit.audits),
      String(audit.disagreements),
      typeof audit.pValue === 'number' ? audit.pValue.toExponential(1) : '',
    ]);
  }
  if (rows.length === 0) return;
  io.stdout('\naudits by this buyer (svc audit show <peer> for the probes):\n');
  printTable(io, ['SERVICE', 'VERDICT', 'AUDITS', 'ODD ONE OUT', 'P'], rows);
}
