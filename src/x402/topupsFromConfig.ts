/**
 * The one call `svc gateway start` needs: a factory for `startGateway({ topups })` built from the
 * config (`gateway.x402Facilitator`, `gateway.topupMinUsd`, `gateway.topupMaxUsd`, `chain.*`).
 * Facilitator settings are checked immediately, so a preset with missing credentials stops the
 * gateway before it listens, with a message naming the variables.
 */
import { connectChain } from '../chain/index.js';
import type { SvcConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { topupBounds } from './amount.js';
import { createTopupService, defaultFacilitatorFor } from './createTopupService.js';
import { resolveFacilitator } from './facilitator/resolveFacilitator.js';
import type { TopupLedger } from './ledger/TopupLedger.js';
import type { TopupService } from './TopupService.js';

export interface TopupsFromConfigOptions {
  config: SvcConfig;
  dataDir: string;
  env: NodeJS.ProcessEnv;
  logger?: Logger;
}

/** Validates now; returns the factory the gateway calls with its open store. */
export function topupsFromConfig(
  options: TopupsFromConfigOptions,
): (store: { topupLedger(): TopupLedger }) => Promise<TopupService | undefined> {
  const { config } = options;
  topupBounds(config.gateway.topupMinUsd, config.gateway.topupMaxUsd);
  const setting = config.gateway.x402Facilitator ?? defaultFacilitatorFor(config.chain.network);
  if (setting) resolveFacilitator(setting, { env: options.env });
  return async (store) => {
    try {
      return await build(store);
    } catch (error) {
      // An explicitly configured facilitator must work; the default one only when a chain is there.
      if (config.gateway.x402Facilitator) throw error;
      options.logger?.warn(
        { err: error },
        'x402 top-ups disabled: the chain cannot be read (start it with `svc chain start`, or set chain.rpcUrl)',
      );
      return undefined;
    }
  };

  async function build(store: { topupLedger(): TopupLedger }): Promise<TopupService> {
    const chain = connectChain(config.chain, options.dataDir);
    const created = await createTopupService({
      ledger: store.topupLedger(),
      publicClient: chain.clients.publicClient,
      usdcAddress: chain.contract.usdcAddress,
      network: config.chain.network,
      facilitator: config.gateway.x402Facilitator,
      topupMinUsd: config.gateway.topupMinUsd,
      topupMaxUsd: config.gateway.topupMaxUsd,
      env: options.env,
      ...(options.logger ? { logger: options.logger } : {}),
    });
    options.logger?.info(
      { facilitator: created.facilitator?.description ?? 'none', asset: created.asset.address },
      'x402 top-ups ready',
    );
    return created.service;
  }
}
