/** What top-ups read from the chain: balances, the head block, and where an authorization was used. */
import {
  type Address,
  type Hex,
  isAddressEqual,
  type PublicClient,
  parseAbi,
  parseEventLogs,
} from 'viem';

const TOKEN_ABI = parseAbi([
  'function balanceOf(address account) view returns (uint256)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);

/** A transfer made by an EIP-3009 authorization, as found on chain. */
export interface AuthorizationUse {
  /** `0x` when the nonce was used without a visible transfer (e.g. cancelAuthorization). */
  transaction: Hex;
  /** Token transfers out of the payer in that transaction. */
  transfers: Array<{ to: Address; value: bigint }>;
}

export interface TopupChainReader {
  balanceOf(asset: Address, owner: Address): Promise<bigint>;
  blockNumber(): Promise<bigint>;
  /** Unix seconds of the latest block (the chain's clock, which decides validity). */
  latestTimestamp(): Promise<bigint>;
  /** The transfer made with (payer, nonce) on `asset`, or null while the nonce is unused. */
  findAuthorizationUse(query: {
    asset: Address;
    payer: Address;
    nonce: Hex;
    fromBlock: bigint;
  }): Promise<AuthorizationUse | null>;
}

/** The reader over a viem public client. */
export function viemChainReader(client: PublicClient): TopupChainReader {
  return {
    balanceOf: (asset, owner) =>
      client.readContract({
        address: asset,
        abi: TOKEN_ABI,
        functionName: 'balanceOf',
        args: [owner],
      }),
    blockNumber: () => client.getBlockNumber({ cacheTime: 0 }),
    latestTimestamp: async () => (await client.getBlock({ blockTag: 'latest' })).timestamp,
    async findAuthorizationUse({ asset, payer, nonce, fromBlock }) {
      const used = await client.readContract({
        address: asset,
        abi: TOKEN_ABI,
        functionName: 'authorizationState',
        args: [payer, nonce],
      });
      if (!used) return null;
      const logs = await client.getLogs({
        address: asset,
        event: TOKEN_ABI[2],
        args: { authorizer: payer, nonce },
        fromBlock,
        toBlock: 'latest',
      });
      const log = logs[0];
      // Used but not through a transfer we can see (e.g. cancelAuthorization): nothing arrived.
      if (!log?.transactionHash) return { transaction: '0x', transfers: [] };
      const receipt = await client.getTransactionReceipt({ hash: log.transactionHash });
      const transfers = parseEventLogs({
        abi: TOKEN_ABI,
        eventName: 'Transfer',
        logs: receipt.logs,
      }).filter(
        (transfer) =>
          isAddressEqual(transfer.address, asset) && isAddressEqual(transfer.args.from, payer),
      );
      return {
        transaction: log.transactionHash,
        transfers: transfers.map((transfer) => ({
          to: transfer.args.to,
          value: transfer.args.value,
        })),
      };
    },
  };
}
