/**
 * The local facilitator: `@x402/core`'s x402Facilitator with `@x402/evm`'s exact scheme, signing
 * settlement transactions with a viem wallet on the local chain (or any EVM RPC).
 */
import { x402Facilitator } from '@x402/core/facilitator';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { type Chain, createWalletClient, defineChain, type Hex, http, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { networkOf } from '../constants.js';

export interface LocalFacilitatorOptions {
  rpcUrl: string;
  chainId: number;
  /** Key of the account that submits (and pays gas for) settlement transactions. */
  privateKey: Hex;
  /** How long settle waits for a receipt before answering `settlement_pending`. */
  confirmationTimeoutMs?: number;
}

export interface LocalFacilitator {
  facilitator: x402Facilitator;
  /** Address that submits settlements. */
  address: `0x${string}`;
  network: `eip155:${number}`;
}

/** Builds the facilitator for one chain. */
export function createLocalFacilitator(options: LocalFacilitatorOptions): LocalFacilitator {
  const chain: Chain = defineChain({
    id: options.chainId,
    name: `chain ${options.chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [options.rpcUrl] } },
  });
  const account = privateKeyToAccount(options.privateKey);
  const client = createWalletClient({
    account,
    chain,
    transport: http(options.rpcUrl),
    pollingInterval: 100,
  }).extend(publicActions);
  const signer = toFacilitatorEvmSigner(
    {
      address: account.address,
      readContract: (args) =>
        client.readContract(args as Parameters<typeof client.readContract>[0]),
      verifyTypedData: (args) =>
        client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
      writeContract: (args) =>
        client.writeContract(args as Parameters<typeof client.writeContract>[0]),
      sendTransaction: (args) => client.sendTransaction(args),
      waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args),
      getCode: (args) => client.getCode(args),
    },
    { confirmationTimeoutMs: options.confirmationTimeoutMs ?? 60_000 },
  );
  const network = networkOf(options.chainId);
  const facilitator = new x402Facilitator().register(network, new ExactEvmScheme(signer));
  return { facilitator, address: account.address, network };
}
