/** Builds peer records for tests and benchmarks (unsigned: the directory already verified them). */
import type { TokenPricing } from '../../money/index.js';
import type {
  ApiProtocol,
  KnownPeer,
  ProviderAnnouncement,
  ServiceCapabilities,
  UnitBillingModel,
} from '../../network/index.js';

export interface ServiceSpec {
  id: string;
  pricing?: TokenPricing;
  protocols?: ApiProtocol[];
  categories?: string[];
  capabilities?: ServiceCapabilities;
  unitBilling?: UnitBillingModel;
}

export interface PeerSpec {
  /** Any string; padded/hashed into a 40-hex peer id by `peerIdFor`. */
  peerId: string;
  provider?: string;
  services: ServiceSpec[];
  defaultPricing?: TokenPricing;
  reachable?: boolean;
  uploadLimitBytes?: number;
}

/** A deterministic 40-hex peer id from a short label (`a` -> `aaaa...`). */
export function peerIdFor(label: string): string {
  if (/^[0-9a-f]{40}$/.test(label)) return label;
  const hex = [...label].map((char) => char.charCodeAt(0).toString(16).padStart(2, '0')).join('');
  return hex.padEnd(40, '0').slice(0, 40);
}

/** A KnownPeer with one provider announcing `services`. */
export function peerRecord(spec: PeerSpec): KnownPeer {
  const defaultPricing = spec.defaultPricing ?? { inputUsdPerMillion: 1, outputUsdPerMillion: 2 };
  const provider: ProviderAnnouncement = {
    provider: spec.provider ?? 'openai-chat',
    services: spec.services.map((service) => service.id),
    defaultPricing,
    servicePricing: Object.fromEntries(
      spec.services.filter((s) => s.pricing).map((s) => [s.id, s.pricing!]),
    ),
    serviceCategories: Object.fromEntries(
      spec.services.filter((s) => s.categories).map((s) => [s.id, s.categories!]),
    ),
    serviceApiProtocols: Object.fromEntries(
      spec.services.map((s): [string, ApiProtocol[]] => [
        s.id,
        s.protocols ?? ['openai-chat-completions'],
      ]),
    ),
    serviceCapabilities: Object.fromEntries(
      spec.services.filter((s) => s.capabilities).map((s) => [s.id, s.capabilities!]),
    ),
    serviceUnitBillingModels: Object.fromEntries(
      spec.services.filter((s) => s.unitBilling).map((s) => [s.id, s.unitBilling!]),
    ),
    maxConcurrency: 8,
    currentLoad: 0,
  };
  const peerId = peerIdFor(spec.peerId);
  return {
    metadata: {
      peerId,
      version: 1,
      displayName: `seller ${spec.peerId}`,
      providers: [provider],
      capabilities: { uploadLimitBytes: spec.uploadLimitBytes ?? 10 * 1024 * 1024 },
      timestamp: 0,
      signature: '0x',
    },
    reachable: spec.reachable ?? true,
    lastSeenAt: 0,
    addresses: [],
  };
}
