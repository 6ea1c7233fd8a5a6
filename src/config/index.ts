/** Configuration: the schema of `<data-dir>/config.json`, its loader (defaults < file < env < flags), data dir. */

// ensureDir lives at the bottom floor (src/files); every folder above reaches it here too.
export { ensureDir } from '../files/index.js';
export { writeFileAtomic } from './atomicWrite.js';
export { ConfigError } from './ConfigError.js';
export { resolveDataDir } from './dataDir.js';
export { ENV_OVERRIDES } from './env.js';
export { FileChanges } from './fileChanges.js';
export {
  configPathFor,
  type LoadConfigOptions,
  type LoadedConfig,
  loadConfig,
  readConfigFile,
  validateConfig,
  writeConfigFile,
} from './loadConfig.js';
export { deepMerge, getAtPath, setAtPath } from './paths.js';
export { readTextFile } from './readTextFile.js';
export { configSchema, defaultConfig, type SvcConfig, type SvcConfigInput } from './schema.js';
export type {
  AuditConfig,
  BuyerConfig,
  PresetConfig,
  ResponseStoreConfig,
} from './sections/buyer.js';
export { CHAIN_NETWORKS, type ChainConfig, type PaymentsConfig } from './sections/chain.js';
export {
  maxPricingSchema,
  peerIdSchema,
  routingPreferencesSchema,
  tokenPricingSchema,
  usdNumberSchema,
} from './sections/common.js';
export type { GatewayConfig } from './sections/gateway.js';
export type { NetworkConfig } from './sections/network.js';
export {
  API_PROTOCOLS,
  PROVIDER_TYPES,
  type ProviderConfig,
  type SellerConfig,
  type ServiceConfig,
} from './sections/seller.js';

import type { z } from 'zod';
import type { routingPreferencesSchema as prefs } from './sections/common.js';
/** Effective routing preferences. */
export type RoutingPreferences = z.infer<typeof prefs>;
