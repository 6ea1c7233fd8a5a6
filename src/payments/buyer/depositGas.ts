/**
 * Who pays the gas of a deposit (decision 080): the wallet itself when it holds enough ETH,
 * otherwise the relayer identity; when neither can, a shortfall naming the address to fund.
 */
import { type Address, formatEther } from 'viem';
import type { LocalAccount } from 'viem/accounts';
import {
  type DepositAuthorization,
  depositAuthorizationGasWei,
  ethBalanceOf,
  type PaymentsContract,
} from '../../chain/index.js';
import { formatUsd } from '../../money/index.js';

/** The relayer identity of this sweep, or why it cannot be used. */
export type RelayerResolution =
  | { identity: string; account: LocalAccount }
  | { identity: string; error: string };

export type GasPayer =
  | { kind: 'self'; account: LocalAccount }
  | { kind: 'relayer'; identity: string; account: LocalAccount };

/** Neither the wallet nor the relayer can pay: send ETH to `fundAddress`. */
export interface GasShortfall {
  kind: 'shortfall';
  fundAddress: Address;
  /** Identity owning `fundAddress`. */
  fundIdentity: string;
  /** Estimated wei needed (with margin). */
  neededWei: bigint;
  /** One sentence for logs and the CLI. */
  message: string;
}

export interface ChooseGasPayerArgs {
  contract: PaymentsContract;
  identity: string;
  owner: LocalAccount;
  relayer: RelayerResolution;
  auth: DepositAuthorization;
}

/** Picks who submits `auth`: the owner if it can pay the gas, else the relayer, else a shortfall. */
export async function chooseGasPayer(args: ChooseGasPayerArgs): Promise<GasPayer | GasShortfall> {
  const { contract, owner, relayer, auth } = args;
  const neededWei = await depositAuthorizationGasWei(contract, owner.address, auth);
  if ((await ethBalanceOf(contract, owner.address)) >= neededWei) {
    return { kind: 'self', account: owner };
  }
  const walletUsd = formatUsd(auth.valueMicro);
  const needEth = formatEther(neededWei);
  if ('error' in relayer) {
    return {
      kind: 'shortfall',
      fundAddress: owner.address,
      fundIdentity: args.identity,
      neededWei,
      message: `Identity "${args.identity}" holds ${walletUsd} USDC but no ETH for gas, and the relayer identity "${relayer.identity}" cannot be used (${relayer.error}): send about ${needEth} ETH to ${owner.address} or set chain.payments.relayerIdentity.`,
    };
  }
  const sameWallet = relayer.account.address.toLowerCase() === owner.address.toLowerCase();
  if (!sameWallet && (await ethBalanceOf(contract, relayer.account.address)) >= neededWei) {
    return { kind: 'relayer', identity: relayer.identity, account: relayer.account };
  }
  return {
    kind: 'shortfall',
    fundAddress: relayer.account.address,
    fundIdentity: relayer.identity,
    neededWei,
    message: sameWallet
      ? `Identity "${args.identity}" holds ${walletUsd} USDC but too little ETH to pay the deposit gas: send about ${needEth} ETH to ${owner.address}.`
      : `Identity "${args.identity}" holds ${walletUsd} USDC but no ETH for gas, and the relayer identity "${relayer.identity}" (${relayer.account.address}) has too little ETH to submit its deposit: send about ${needEth} ETH to ${relayer.account.address}.`,
  };
}
