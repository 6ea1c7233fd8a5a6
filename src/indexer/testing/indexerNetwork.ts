/**
 * Test fixture of the indexer suites: a real anvil chain with the payments contract, a libp2p
 * bootstrap node, announcing sellers (honest ones and ones serving bad records) and channels
 * opened, settled and closed on chain by real signatures.
 */
import type { Hex } from 'viem';
import { DEFAULT_FAUCET_ETH, type LocalChain, startLocalChain } from '../../chain/index.js';
import { peerIdFromAddress } from '../../identity/index.js';
import {
  type Announcer,
  canonicalMetadataBytes,
  encodeMetadata,
  type PeerMetadata,
  type SvcNode,
  signMetadata,
  startAnnouncing,
} from '../../network/index.js';
import {
  randomIdentity,
  startLoopbackNode,
  type TestIdentity,
} from '../../network/testing/index.js';
import { channelIdOf, signReserve, signVoucher } from '../../payments/index.js';

type Node = SvcNode & { identity: TestIdentity };

/** A seller node announcing `bytes` (whatever they are). */
export interface TestSeller {
  node: Node;
  announcer: Announcer;
  bytes: Uint8Array;
}

/** How a seller's record is spoiled (or not). */
export type RecordKind = 'honest' | 'liar' | 'tampered' | 'foreign-signed' | 'oversized' | 'stale';

/** Chain + bootstrap + sellers; everything stopped by `stop`. */
export class IndexerNetwork {
  readonly sellers: TestSeller[] = [];
  private saltCounter = 0;

  private constructor(
    readonly chain: LocalChain,
    readonly bootstrap: Node,
  ) {}

  static async start(): Promise<IndexerNetwork> {
    const chain = await startLocalChain();
    const bootstrap = await startLoopbackNode('bootstrap');
    return new IndexerNetwork(chain, bootstrap);
  }

  get bootstrapAddress(): string {
    return this.bootstrap.multiaddrs()[0]!;
  }

  /** The record an honest seller signs. */
  async record(
    identity: TestIdentity,
    name: string,
    extra: { timestamp?: number; verifications?: Record<string, unknown> } = {},
  ): Promise<PeerMetadata> {
    return signMetadata(
      {
        peerId: peerIdFromAddress(identity.account.address),
        version: 1,
        displayName: name,
        providers: [
          {
            provider: 'openai',
            services: [`${name}-chat`],
            defaultPricing: { inputUsdPerMillion: 1, outputUsdPerMillion: 2 },
            maxConcurrency: 4,
            currentLoad: 0,
          },
        ],
        capabilities: {
          uploadLimitBytes: 65_536,
          payments: {
            chainId: this.chain.contract.chainId,
            paymentsContract: this.chain.contract.paymentsAddress,
          },
        },
        region: 'eu',
        timestamp: extra.timestamp ?? Date.now(),
        ...(extra.verifications ? { verifications: extra.verifications } : {}),
      },
      identity.account,
    );
  }

  /** Starts a seller announcing a record of `kind`. */
  async startSeller(name: string, kind: RecordKind = 'honest'): Promise<TestSeller> {
    const node = await startLoopbackNode('seller', { bootstrap: [this.bootstrapAddress] });
    const record = await this.record(node.identity, name, {
      // Signed 31 minutes ago: past the 30-minute freshness window.
      ...(kind === 'stale' ? { timestamp: Date.now() - 31 * 60_000 } : {}),
      // Validly signed, but claiming an on-chain record it does not have.
      ...(kind === 'liar'
        ? { verifications: { onChainChannelCount: 999, settledVolumeUsd: '1000000.000000' } }
        : {}),
    });
    let bytes: Uint8Array;
    if (kind === 'tampered') {
      // Signed, then the price edited: the signature no longer covers what is served.
      const provider = {
        ...record.providers[0]!,
        defaultPricing: { inputUsdPerMillion: 0.01, outputUsdPerMillion: 0.01 },
      };
      bytes = encodeMetadata({ ...record, providers: [provider] });
    } else if (kind === 'foreign-signed') {
      // The node's own peer id, signed by somebody else's key.
      const signature = await randomIdentity().account.signMessage({
        message: { raw: canonicalMetadataBytes(record) },
      });
      const signed = { ...record, signature };
      bytes = encodeMetadata(signed);
    } else if (kind === 'oversized') {
      bytes = encodeMetadata({ ...record, displayName: 'x'.repeat(70_000) });
    } else bytes = encodeMetadata(record);
    const announcer = await startAnnouncing(node, () => bytes);
    const seller = { node, announcer, bytes };
    this.sellers.push(seller);
    return seller;
  }

  /** Funds a fresh buyer with credits in the payments contract. */
  async fundedBuyer(usdcMicro = 10_000_000n): Promise<TestIdentity> {
    const buyer = randomIdentity();
    await this.chain.faucet(buyer.account.address, { usdcMicro, ethWei: DEFAULT_FAUCET_ETH });
    await this.chain.contract.deposit(buyer.account, usdcMicro);
    return buyer;
  }

  /**
   * Opens a channel from `buyer` to `seller` locking `lockMicro`, settles each cumulative amount
   * in turn, and closes it when asked. Returns the channel id.
   */
  async payChannel(
    buyer: TestIdentity,
    seller: TestIdentity,
    cumulativeMicro: readonly bigint[],
    options: { lockMicro?: bigint; close?: boolean } = {},
  ): Promise<Hex> {
    const contract = this.chain.contract;
    await this.chain.faucet(seller.account.address, { ethWei: DEFAULT_FAUCET_ETH });
    const domain = { chainId: contract.chainId, paymentsAddress: contract.paymentsAddress };
    this.saltCounter += 1;
    const salt = `0x${this.saltCounter.toString(16).padStart(64, '0')}` as Hex;
    const channelId = channelIdOf(buyer.account.address, seller.account.address, salt);
    const maxAmount = options.lockMicro ?? 1_000_000n;
    const deadline = BigInt(Math.floor(Date.now() / 1000) + 3600);
    const signature = await signReserve(buyer.account, domain, {
      channelId,
      buyer: buyer.account.address,
      seller: seller.account.address,
      maxAmount,
      deadline,
    });
    await contract.openChannel(seller.account, {
      buyer: buyer.account.address,
      salt,
      maxAmount,
      deadline,
      signature,
    });
    for (const cumulativeAmount of cumulativeMicro) {
      const voucher = await signVoucher(buyer.account, domain, { channelId, cumulativeAmount });
      await contract.settle(seller.account, channelId, cumulativeAmount, voucher);
    }
    if (options.close) await contract.close(seller.account, channelId, 0n, '0x');
    return channelId;
  }

  /** Mines `count` empty blocks (so earlier events pass the confirmation depth). */
  async mine(count: number): Promise<void> {
    for (let i = 0; i < count; i++) await this.chain.increaseTime(1);
  }

  async stop(): Promise<void> {
    for (const seller of this.sellers) {
      await seller.announcer.stop();
      await seller.node.stop();
    }
    await this.bootstrap.stop();
    await this.chain.stop();
  }
}
