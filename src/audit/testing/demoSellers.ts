/** The config of a demo seller of one model, as the audit tests on a loopback network start them. */
import type { SellerConfig } from '../../config/index.js';

export function demoSellerOf(
  model: string,
  displayName: string,
  inputUsdPerMillion = 3,
): SellerConfig {
  return {
    displayName,
    uploadLimitBytes: 1024 * 1024,
    providers: [
      {
        type: 'demo',
        name: 'demo',
        services: { [model]: { categories: ['text'] } },
        defaultPricing: { inputUsdPerMillion, outputUsdPerMillion: 12 },
        maxConcurrency: 16,
      },
    ],
  };
}
