/**
 * The invariant suite's chain: anvil with TestUSDC and SvcPayments, eight funded actors, and the
 * few JSON-RPC calls the suite makes. Every sequence starts from the same snapshot; every
 * transaction is mined at a block time the model chose (`evm_setNextBlockTimestamp`), so time is
 * exact and a reclaim one second before the grace period ends is tested as such.
 */
import {
  type Address,
  createPublicClient,
  decodeErrorResult,
  encodeFunctionData,
  type Hex,
  http,
  keccak256,
  maxUint256,
  numberToHex,
  type PublicClient,
  stringToHex,
} from 'viem';
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { type LocalChain, startLocalChain } from '../../../chain/index.js';
import { SvcPaymentsAbi, TestUSDCAbi } from '../../../contracts/index.js';
import type { PaymentsDomain } from '../../index.js';

/** Seconds between a buyer's requestClose and its reclaim in the suite. */
export const GRACE_SECONDS = 3600;
/** USDC (micro) each buyer's wallet starts with. */
export const BUYER_START_MICRO = 1_000_000_000n;

export type Role = 'buyer' | 'seller' | 'relayer';

export interface Actor {
  index: number;
  name: string;
  role: Role;
  account: PrivateKeyAccount;
  address: Address;
}

/** What the suite reads from the chain after every step. */
export interface ChainState {
  /** USDC the payments contract holds. */
  held: bigint;
  /** USDC in each actor's wallet, by actor index. */
  wallets: bigint[];
  /** Free credits of each actor in the contract, by actor index. */
  credits: bigint[];
  /** The channels the model knows, by position in the model. */
  channels: {
    buyer: Address;
    seller: Address;
    locked: bigint;
    settled: bigint;
    closeRequestedAt: number;
    status: number;
  }[];
}

/** A transaction as the suite sends it (from an impersonated actor). */
export interface Transaction {
  from: Address;
  to: Address;
  data: Hex;
}

export interface Outcome {
  reverted: boolean;
  /** The revert reason (`Error(string)`), when it reverted. */
  reason?: string;
  state: ChainState;
}

const GAS_LIMIT = numberToHex(1_500_000);
const ROLES: Array<[Role, number]> = [
  ['buyer', 3],
  ['seller', 3],
  ['relayer', 2],
];

/** Deterministic keys, so a failing seed replays with the same addresses. */
function actors(): Actor[] {
  const list: Actor[] = [];
  for (const [role, count] of ROLES) {
    for (let i = 0; i < count; i++) {
      const name = `${role}${i}`;
      const account = privateKeyToAccount(keccak256(stringToHex(`svc invariant suite ${name}`)));
      list.push({ index: list.length, name, role, account, address: account.address });
    }
  }
  return list;
}

export class World {
  readonly actors = actors();
  readonly payments: Address;
  readonly usdc: Address;
  readonly domain: PaymentsDomain;
  /** The latest block time after a reset: the model's clock starts here. */
  startTime = 0;
  private readonly client: PublicClient;
  private snapshot: Hex | undefined;

  private constructor(readonly chain: LocalChain) {
    this.payments = chain.deployment.paymentsAddress;
    this.usdc = chain.deployment.usdcAddress;
    this.domain = { chainId: chain.deployment.chainId, paymentsAddress: this.payments };
    // One HTTP request carries every read of a step (JSON-RPC batch).
    this.client = createPublicClient({
      transport: http(chain.rpcUrl, { batch: { batchSize: 200, wait: 0 } }),
    }) as PublicClient;
  }

  /** Starts anvil, deploys, funds the actors (ETH for gas, USDC for buyers, approvals). */
  static async start(): Promise<World> {
    const chain = await startLocalChain({ gracePeriodSeconds: GRACE_SECONDS });
    const world = new World(chain);
    try {
      await world.rpc('anvil_autoImpersonateAccount', [true]);
      for (const actor of world.actors) {
        await world.rpc('anvil_setBalance', [actor.address, numberToHex(10n ** 21n)]);
        if (actor.role !== 'buyer') continue;
        await chain.faucet(actor.address, { usdcMicro: BUYER_START_MICRO });
        await world.mustSend({
          from: actor.address,
          to: world.usdc,
          data: encodeFunctionData({
            abi: TestUSDCAbi,
            functionName: 'approve',
            args: [world.payments, maxUint256],
          }),
        });
      }
      await world.reset();
      return world;
    } catch (error) {
      await chain.stop();
      throw error;
    }
  }

  /** Back to the funded starting state. */
  async reset(): Promise<void> {
    if (this.snapshot) {
      const reverted = await this.rpc('evm_revert', [this.snapshot]);
      if (reverted !== true) throw new Error('anvil refused to revert to the snapshot');
    }
    this.snapshot = (await this.rpc('evm_snapshot', [])) as Hex;
    const block = (await this.rpc('eth_getBlockByNumber', ['latest', false])) as { timestamp: Hex };
    this.startTime = Number(block.timestamp);
  }

  /** Mines `tx` alone in a block at `timestamp`, then reads the state (one batch). */
  async execute(tx: Transaction, timestamp: number, channelIds: readonly Hex[]): Promise<Outcome> {
    await this.rpc('evm_setNextBlockTimestamp', [timestamp]);
    const hash = (await this.rpc('eth_sendTransaction', [{ ...tx, gas: GAS_LIMIT }])) as Hex;
    const receipt = await this.receipt(hash);
    const state = await this.read(channelIds);
    if (receipt.status === '0x1') return { reverted: false, state };
    return { reverted: true, reason: await this.revertReason(hash), state };
  }

  /** Everything the invariants look at, read in one batch. */
  async read(channelIds: readonly Hex[]): Promise<ChainState> {
    const call = <T>(
      to: Address,
      abi: typeof TestUSDCAbi | typeof SvcPaymentsAbi,
      functionName: string,
      args: readonly unknown[],
    ) =>
      this.client.readContract({ address: to, abi, functionName, args } as Parameters<
        PublicClient['readContract']
      >[0]) as Promise<T>;
    const [held, wallets, credits, channels] = await Promise.all([
      call<bigint>(this.usdc, TestUSDCAbi, 'balanceOf', [this.payments]),
      Promise.all(
        this.actors.map((a) => call<bigint>(this.usdc, TestUSDCAbi, 'balanceOf', [a.address])),
      ),
      Promise.all(
        this.actors.map((a) =>
          call<bigint>(this.payments, SvcPaymentsAbi, 'balanceOf', [a.address]),
        ),
      ),
      Promise.all(
        channelIds.map((id) =>
          call<ChainState['channels'][number] & { closeRequestedAt: bigint }>(
            this.payments,
            SvcPaymentsAbi,
            'getChannel',
            [id],
          ),
        ),
      ),
    ]);
    return {
      held,
      wallets,
      credits,
      channels: channels.map((channel) => ({
        buyer: channel.buyer,
        seller: channel.seller,
        locked: channel.locked,
        settled: channel.settled,
        closeRequestedAt: Number(channel.closeRequestedAt),
        status: Number(channel.status),
      })),
    };
  }

  stop(): Promise<void> {
    return this.chain.stop();
  }

  private async mustSend(tx: Transaction): Promise<void> {
    const hash = (await this.rpc('eth_sendTransaction', [{ ...tx, gas: GAS_LIMIT }])) as Hex;
    const receipt = await this.receipt(hash);
    if (receipt.status !== '0x1') throw new Error(`set-up transaction ${hash} reverted`);
  }

  /** The receipt, once anvil has mined the transaction (automine answers before it mines). */
  private async receipt(hash: Hex): Promise<{ status: Hex }> {
    for (let attempt = 0; attempt < 2_000; attempt++) {
      const receipt = (await this.rpc('eth_getTransactionReceipt', [hash])) as {
        status: Hex;
      } | null;
      if (receipt) return receipt;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error(`${hash} was not mined within 10 s: is anvil automining?`);
  }

  /** The `Error(string)` a mined transaction reverted with ('' when it carried none). */
  private async revertReason(hash: Hex): Promise<string> {
    const trace = (await this.rpc('debug_traceTransaction', [hash, { tracer: 'callTracer' }])) as {
      output?: Hex;
    };
    if (!trace.output || trace.output === '0x') return '';
    const decoded = decodeErrorResult({ abi: [], data: trace.output });
    return decoded.errorName === 'Error' ? String(decoded.args[0]) : decoded.errorName;
  }

  private rpc(method: string, params: unknown[]): Promise<unknown> {
    return this.client.request({
      method: method as 'eth_chainId',
      params: params as unknown as undefined,
    });
  }
}
