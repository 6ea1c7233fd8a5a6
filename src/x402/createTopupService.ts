/** Wires a TopupService from gateway settings: facilitator, bounds, the chain's USDC, a ledger. */
import type { FacilitatorClient } from '@x402/core/server';
import { type Address, getAddress, type PublicClient, parseAbi } from 'viem';
import { SvcError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { topupBounds } from './amount.js';
import { viemChainReader } from './chainReader.js';
import type { TopupAsset } from './constants.js';
import { type ResolvedFacilitator, resolveFacilitator } from './facilitator/resolveFacilitator.js';
import type { TopupLedger } from './ledger/TopupLedger.js';
import { TopupService } from './TopupService.js';

const EIP712_ABI = parseAbi([
  'function name() view returns (string)',
  'function version() view returns (string)',
]);

/** Reads the token's EIP-712 domain (name, version) and the chain id: what payers sign over. */
export async function loadTopupAsset(
  client: PublicClient,
  usdcAddress: Address,
): Promise<TopupAsset> {
  const [chainId, name, version] = await Promise.all([
    client.getChainId(),
    client.readContract({ address: usdcAddress, abi: EIP712_ABI, functionName: 'name' }),
    client.readContract({ address: usdcAddress, abi: EIP712_ABI, functionName: 'version' }),
  ]);
  return { chainId, address: getAddress(usdcAddress), eip712Name: name, eip712Version: version };
}

/** The facilitator used when `--x402-facilitator` is not given, per chain network. */
export function defaultFacilitatorFor(
  network: 'local' | 'base-sepolia' | 'base',
): string | undefined {
  if (network === 'local') return 'local';
  if (network === 'base-sepolia') return 'x402.org';
  return undefined;
}

export interface CreateTopupServiceOptions {
  ledger: TopupLedger;
  publicClient: PublicClient;
  usdcAddress: Address;
  /** `chain.network` of the config, to pick a default facilitator. */
  network: 'local' | 'base-sepolia' | 'base';
  /** `gateway.x402Facilitator` / `--x402-facilitator`. */
  facilitator?: string | undefined;
  topupMinUsd: string;
  topupMaxUsd: string;
  env: NodeJS.ProcessEnv;
  logger?: Logger;
  facilitatorTimeoutMs?: number;
  /** Where the `local` preset points. */
  localFacilitatorUrl?: string;
  reconcileIntervalMs?: number;
}

export interface CreatedTopupService {
  service: TopupService;
  /** Undefined when no facilitator is configured (top-ups then answer 503). */
  facilitator: ResolvedFacilitator | undefined;
  asset: TopupAsset;
}

/**
 * Validates settings first (a preset with missing credentials throws `invalid_config` naming
 * the variables, so the gateway refuses to start), then reads the token's domain from the chain.
 */
export async function createTopupService(
  options: CreateTopupServiceOptions,
): Promise<CreatedTopupService> {
  const bounds = topupBounds(options.topupMinUsd, options.topupMaxUsd);
  const setting = options.facilitator ?? defaultFacilitatorFor(options.network);
  const facilitator = setting
    ? resolveFacilitator(setting, {
        env: options.env,
        ...(options.facilitatorTimeoutMs ? { timeoutMs: options.facilitatorTimeoutMs } : {}),
        ...(options.localFacilitatorUrl ? { localUrl: options.localFacilitatorUrl } : {}),
      })
    : undefined;
  const asset = await loadTopupAsset(options.publicClient, options.usdcAddress);
  const service = new TopupService({
    ledger: options.ledger,
    facilitator: facilitator?.client ?? unconfiguredFacilitator(),
    chain: viemChainReader(options.publicClient),
    asset,
    bounds,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.reconcileIntervalMs !== undefined
      ? { reconcileIntervalMs: options.reconcileIntervalMs }
      : {}),
  });
  return { service, facilitator, asset };
}

function unconfiguredFacilitator(): FacilitatorClient {
  const refuse = async (): Promise<never> => {
    throw new SvcError('facilitator_unavailable', {
      message:
        'No x402 facilitator is configured on this gateway. Start it with --x402-facilitator cdp (or a facilitator URL).',
    });
  };
  return { verify: refuse, settle: refuse, getSupported: refuse };
}
