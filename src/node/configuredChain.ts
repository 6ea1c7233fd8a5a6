/** The payment chain a node is configured with. */
import { connectChain, type PaymentsContract } from '../chain/index.js';
import type { ChainConfig } from '../config/index.js';
import { errorMessage } from '../errors/index.js';

/** The configured chain for a seller or buyer, or why there is none (no I/O). */
export function configuredChain(
  config: ChainConfig,
  dataDir: string,
): { contract: PaymentsContract | undefined; problem?: string } {
  try {
    return { contract: connectChain(config, dataDir).contract };
  } catch (error) {
    return { contract: undefined, problem: errorMessage(error) };
  }
}
