/**
 * Sends contract transactions for one account: one nonce counter per account, sends serialised
 * so concurrent callers never reuse a nonce, every transaction waits for its receipt, and a
 * reverted transaction throws with the contract's reason.
 */
import {
  type Abi,
  type Account,
  type Address,
  type Chain,
  type ContractFunctionArgs,
  type ContractFunctionName,
  createWalletClient,
  type Hash,
  type PublicClient,
  type TransactionReceipt,
  type Transport,
  type WalletClient,
} from 'viem';
import { errorMessage } from '../errors/index.js';

/** What a sender needs of a network's clients (`ChainClients` from clients.ts has it). */
export interface SenderConnection {
  chain: Chain;
  transport: Transport;
  publicClient: PublicClient;
}

/** Serialises async work (a tiny mutex). */
class Queue {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work, work);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

export interface WriteRequest<
  abi extends Abi,
  name extends ContractFunctionName<abi, 'nonpayable' | 'payable'>,
> {
  address: Address;
  abi: abi;
  functionName: name;
  args: ContractFunctionArgs<abi, 'nonpayable' | 'payable', name>;
}

/**
 * The gas limit sent for an estimate. The estimate runs in one block time and the transaction may
 * be mined in a later one, so a storage write that was a no-op in the estimate (a seller's
 * `lastSettlementAt` already equal to that time, after a settlement in the block before) costs
 * 2,800 gas more when mined: without a margin a seller settling channels one after another ran
 * out of gas and reverted (src/payments/settlementGas.e2e.test.ts). Only gas used is paid.
 */
function withGasMargin(estimate: bigint): bigint {
  return estimate + estimate / 4n;
}

/** Sends transactions from one account. Create one per account and share it. */
export class TxSender {
  readonly account: Account;
  readonly wallet: WalletClient;
  private readonly publicClient: PublicClient;
  private readonly queue = new Queue();
  private nextNonce: number | undefined;

  constructor(clients: SenderConnection, account: Account) {
    this.account = account;
    this.publicClient = clients.publicClient;
    this.wallet = createWalletClient({
      account,
      chain: clients.chain,
      transport: clients.transport,
    });
  }

  get address(): Address {
    return this.account.address;
  }

  /** Simulates (so a revert costs nothing and names its reason), sends, waits for the receipt. */
  async write<
    const abi extends Abi,
    name extends ContractFunctionName<abi, 'nonpayable' | 'payable'>,
  >(request: WriteRequest<abi, name>): Promise<TransactionReceipt> {
    const hash = await this.queue.run(async () => {
      // viem's generics cannot follow a generic abi through simulate; the request is typed above.
      const { request: prepared } = await this.publicClient.simulateContract({
        ...(request as WriteRequest<Abi, string>),
        account: this.account,
      } as Parameters<PublicClient['simulateContract']>[0]);
      const estimate = await this.publicClient.estimateContractGas({
        ...(request as WriteRequest<Abi, string>),
        account: this.account,
      } as Parameters<PublicClient['estimateContractGas']>[0]);
      return this.withNonce((nonce) =>
        this.wallet.writeContract({
          ...(prepared as Parameters<WalletClient['writeContract']>[0]),
          account: this.account,
          chain: this.wallet.chain,
          gas: withGasMargin(estimate),
          nonce,
        }),
      );
    });
    return this.waitFor(hash);
  }

  /** Sends plain ETH. */
  async sendValue(to: Address, value: bigint): Promise<TransactionReceipt> {
    const hash = await this.queue.run(async () => {
      return this.withNonce((nonce) =>
        this.wallet.sendTransaction({
          account: this.account,
          chain: this.wallet.chain,
          to,
          value,
          nonce,
        }),
      );
    });
    return this.waitFor(hash);
  }

  /** Deploys a contract and returns its address. */
  async deploy(abi: Abi, bytecode: `0x${string}`, args: readonly unknown[]): Promise<Address> {
    const hash = await this.queue.run(async () => {
      return this.withNonce((nonce) =>
        this.wallet.deployContract({
          abi,
          bytecode,
          args,
          account: this.account,
          chain: this.wallet.chain,
          nonce,
        }),
      );
    });
    const receipt = await this.waitFor(hash);
    if (!receipt.contractAddress) throw new Error(`deployment ${hash} created no contract`);
    return receipt.contractAddress;
  }

  /**
   * Sends with the next nonce. When another process used the account meanwhile ("nonce too
   * low"), re-reads the nonce from the chain and tries again; a transaction is never sent twice
   * with the same nonce, so nothing is paid twice.
   */
  private async withNonce(send: (nonce: number) => Promise<Hash>): Promise<Hash> {
    for (let attempt = 0; ; attempt++) {
      const nonce = await this.takeNonce();
      try {
        return await send(nonce);
      } catch (error) {
        // The transaction may not have been accepted: read the nonce from the chain next time.
        this.nextNonce = undefined;
        const text = errorMessage(error);
        if (
          attempt < 3 &&
          /nonce too low|nonce provided for the transaction .* is lower/i.test(text)
        )
          continue;
        throw error;
      }
    }
  }

  private async takeNonce(): Promise<number> {
    if (this.nextNonce === undefined) {
      this.nextNonce = await this.publicClient.getTransactionCount({
        address: this.account.address,
        blockTag: 'pending',
      });
    }
    const nonce = this.nextNonce;
    this.nextNonce = nonce + 1;
    return nonce;
  }

  private async waitFor(hash: Hash): Promise<TransactionReceipt> {
    const receipt = await this.publicClient.waitForTransactionReceipt({
      hash,
      pollingInterval: 50,
      timeout: 120_000,
    });
    if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
    return receipt;
  }
}
