/** Builds the seller's unsigned peer record from its config and current load. */
import type { ProviderConfig, SellerConfig } from '../config/index.js';
import type { PeerId } from '../identity/index.js';
import type { TokenPricing } from '../money/index.js';
import {
  type ApiProtocol,
  METADATA_VERSION,
  type PeerCapabilities,
  type ProviderAnnouncement,
  type ServiceCapabilities,
  type UnitBillingModel,
  type UnsignedPeerMetadata,
} from '../network/index.js';
import { protocolsOf } from './providers.js';

/** Name buyers see for a provider. */
export function providerName(provider: ProviderConfig): string {
  return provider.name ?? provider.type;
}

function announcement(provider: ProviderConfig, load: number): ProviderAnnouncement {
  const services = Object.keys(provider.services);
  const servicePricing: Record<string, TokenPricing> = {};
  const serviceCategories: Record<string, string[]> = {};
  const serviceApiProtocols: Record<string, ApiProtocol[]> = {};
  const serviceCapabilities: Record<string, ServiceCapabilities> = {};
  const serviceUnitBillingModels: Record<string, UnitBillingModel> = {};
  for (const [id, service] of Object.entries(provider.services)) {
    if (service.pricing) servicePricing[id] = service.pricing;
    if (service.categories.length > 0) serviceCategories[id] = service.categories;
    serviceApiProtocols[id] = protocolsOf(provider.type);
    if (service.capabilities) serviceCapabilities[id] = service.capabilities;
    if (service.imageUsd !== undefined || service.videoUsd !== undefined) {
      serviceUnitBillingModels[id] = {
        ...(service.imageUsd !== undefined ? { imageUsd: service.imageUsd } : {}),
        ...(service.videoUsd !== undefined ? { videoUsd: service.videoUsd } : {}),
      };
    }
  }
  return {
    provider: providerName(provider),
    services,
    defaultPricing: provider.defaultPricing,
    ...(Object.keys(servicePricing).length > 0 ? { servicePricing } : {}),
    ...(Object.keys(serviceCategories).length > 0 ? { serviceCategories } : {}),
    serviceApiProtocols,
    ...(Object.keys(serviceUnitBillingModels).length > 0 ? { serviceUnitBillingModels } : {}),
    ...(Object.keys(serviceCapabilities).length > 0 ? { serviceCapabilities } : {}),
    maxConcurrency: provider.maxConcurrency,
    currentLoad: Math.min(load, provider.maxConcurrency),
  };
}

/** The record to sign now. */
export function buildMetadata(
  peerId: PeerId,
  seller: SellerConfig,
  loads: number[],
  payments: PeerCapabilities['payments'] | undefined,
  now: number,
): UnsignedPeerMetadata {
  const demo = seller.providers.some((p) => p.type === 'demo');
  return {
    peerId,
    version: METADATA_VERSION,
    displayName: seller.displayName,
    providers: seller.providers.map((provider, index) => announcement(provider, loads[index] ?? 0)),
    capabilities: {
      uploadLimitBytes: seller.uploadLimitBytes,
      ...(demo ? { demo: true } : {}),
      ...(payments ? { payments } : {}),
    },
    ...(seller.region !== undefined ? { region: seller.region } : {}),
    timestamp: now,
  };
}
