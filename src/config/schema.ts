/** The whole `<data-dir>/config.json`: one strict zod schema, every field with a default. */
import { z } from 'zod';
import { buyerSchema } from './sections/buyer.js';
import { chainSchema } from './sections/chain.js';
import { gatewaySchema } from './sections/gateway.js';
import { networkSchema } from './sections/network.js';
import { sellerSchema } from './sections/seller.js';

export const configSchema = z.strictObject({
  $schema: z.string().optional(),
  buyer: buyerSchema.prefault({}),
  seller: sellerSchema.prefault({}),
  gateway: gatewaySchema.prefault({}),
  network: networkSchema.prefault({}),
  chain: chainSchema.prefault({}),
});

/** The effective configuration (defaults applied). */
export type SvcConfig = z.infer<typeof configSchema>;
/** What a config file may contain (everything optional). */
export type SvcConfigInput = z.input<typeof configSchema>;

/** The built-in defaults, as used with no config file. */
export function defaultConfig(): SvcConfig {
  return configSchema.parse({});
}
