/**
 * Test fixture of the paid end-to-end suites: a real anvil chain, a libp2p bootstrap node and a
 * paying buyer proxy (`startPaidBuyerNode`, unscored sellers admitted), plus paid sellers relaying
 * to fake OpenAI upstreams. Only the upstream vendor is faked.
 */
import { privateKeyToAccount } from 'viem/accounts';
import { DEFAULT_FAUCET_ETH, type LocalChain, startLocalChain } from '../../chain/index.js';
import { defaultConfig, type SellerConfig } from '../../config/index.js';
import { IdentityStore } from '../../identity/index.js';
import { silentLogger } from '../../log/index.js';
import {
  costOfUsage,
  type TokenPricing,
  type TokenUsage,
  toPriceMicro,
} from '../../money/index.js';
import type { SvcNode } from '../../network/index.js';
import {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
  waitFor,
} from '../../network/testing/loopback.js';
import type { FakeUpstream } from '../../seller/testing/index.js';
import { removeTempDir, tempDir } from '../../testing/index.js';
import { type PaidBuyerNode, startPaidBuyerNode } from '../startBuyerNode.js';
import {
  type PaidSellerHandle,
  type StartPaidSellerOptions,
  startPaidSeller,
} from '../startSellerNode.js';

export const PRICING: TokenPricing = {
  inputUsdPerMillion: 3,
  outputUsdPerMillion: 20,
  cachedInputUsdPerMillion: 1.5,
};
export const PRICE = toPriceMicro(PRICING);
export const TEXT = 'Paid words travel over libp2p to the buyer.';
/** What the main fake upstream reports for every answer. */
export const USAGE: TokenUsage = { inputTokens: 14, cachedInputTokens: 4, outputTokens: 9 };
export const PER_REQUEST = costOfUsage(USAGE, PRICE);

/** A seller offering `gpt-paid` at PRICING and `gpt-free` for nothing, both from `upstream`. */
export function sellerConfig(upstream: FakeUpstream): SellerConfig {
  return {
    displayName: 'paid seller',
    uploadLimitBytes: 64 * 1024,
    providers: [
      {
        type: 'openai-chat',
        name: 'openai',
        baseUrl: upstream.baseUrl,
        apiKeyEnv: 'FAKE_OPENAI_KEY',
        services: { 'gpt-paid': { categories: ['chat'] } },
        defaultPricing: PRICING,
        maxConcurrency: 4,
      },
      {
        type: 'openai-chat',
        name: 'openai-free',
        baseUrl: upstream.baseUrl,
        apiKeyEnv: 'FAKE_OPENAI_KEY',
        services: { 'gpt-free': { categories: ['chat'] } },
        defaultPricing: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 },
        maxConcurrency: 4,
      },
    ],
  };
}

/** `GET /_svc/channels` entries (amounts: micro-USD decimal strings). */
export interface Channel {
  channelId: string;
  identity: string;
  status: string;
  signedMicro: string;
  requests: number;
  seller: string;
  refusedClaims: number;
  outputTokens: number;
}

type SellerExtras = Partial<Omit<StartPaidSellerOptions, 'seller' | 'network' | 'chain'>>;

/** Chain, bootstrap node and paying buyer; sellers are added with `startSeller`. */
export class PaidNetwork {
  readonly buyerDir: string;
  readonly identities: IdentityStore;
  readonly buyerAddress: `0x${string}`;
  buyer: PaidBuyerNode;
  private readonly dirs: string[];
  private readonly sellers = new Set<PaidSellerHandle>();
  /** False once `stopBuyer` handed the data dir to another process. */
  private buyerRunning = true;

  readonly chain: LocalChain;
  readonly bootstrap: SvcNode;
  readonly buyerOptions: Parameters<typeof startPaidBuyerNode>[0];

  private constructor(parts: {
    chain: LocalChain;
    bootstrap: SvcNode;
    buyerOptions: Parameters<typeof startPaidBuyerNode>[0];
    identities: IdentityStore;
    buyer: PaidBuyerNode;
    dirs: string[];
  }) {
    this.chain = parts.chain;
    this.bootstrap = parts.bootstrap;
    this.buyerOptions = parts.buyerOptions;
    this.buyer = parts.buyer;
    this.dirs = parts.dirs;
    this.buyerDir = parts.buyerOptions.dataDir;
    this.identities = parts.identities;
    this.buyerAddress = parts.identities.loadDefault().account.address;
  }

  /**
   * `channelLockUsd`: each channel's lock (tests use a small one to reach its edge); `audits`:
   * false for a buyer that sends no audit requests of its own (tests that count requests).
   */
  static async start({ channelLockUsd = '0.20', audits = true } = {}): Promise<PaidNetwork> {
    const dirs: string[] = [];
    const chain = await startLocalChain();
    const bootstrap = await startLoopbackNode('bootstrap');
    const buyerDir = tempDir('svc-paid-buyer-');
    dirs.push(buyerDir);
    const identities = new IdentityStore(buyerDir, {});
    const identity = identities.loadDefault();
    await chain.faucet(identity.account.address, { ethWei: DEFAULT_FAUCET_ETH });
    const config = defaultConfig();
    const buyerOptions: Parameters<typeof startPaidBuyerNode>[0] = {
      config: {
        ...config,
        // A brand-new seller has no on-chain history: admit unscored sellers.
        buyer: {
          ...config.buyer,
          routingPreferences: { ...config.buyer.routingPreferences, minTrustScore: 0 },
          audit: { ...config.buyer.audit, enabled: audits },
        },
        network: loopbackNetworkConfig({ bootstrap: [bootstrap.multiaddrs()[0]!] }),
      },
      dataDir: buyerDir,
      identity,
      identities,
      chain: chain.contract,
      paymentsConfig: { channelLockUsd },
      logger: silentLogger(),
      port: 0,
      sweepIntervalMs: 200,
      reputationRefreshMs: 0,
    };
    const buyer = await startPaidBuyerNode(buyerOptions);
    return new PaidNetwork({ chain, bootstrap, buyerOptions, identities, buyer, dirs });
  }

  /** Mints `usdcMicro` test USDC to the buyer and waits until its sweep deposited it. */
  async fundBuyer(usdcMicro: bigint): Promise<void> {
    await this.chain.faucet(this.buyerAddress, { usdcMicro });
    await waitFor(
      async () => (await this.chain.contract.creditsOf(this.buyerAddress)) === usdcMicro,
      20_000,
      'deposit swept',
    );
  }

  tempDir(prefix: string): string {
    const dir = tempDir(`svc-${prefix}-`);
    this.dirs.push(dir);
    return dir;
  }

  /** Options for a new paid seller of `upstream` with its own funded identity. */
  async sellerOptions(upstream: FakeUpstream, extras: SellerExtras = {}) {
    const identity = extras.identity ?? randomIdentity();
    const address = privateKeyToAccount(identity.privateKey).address;
    await this.chain.faucet(address, { ethWei: DEFAULT_FAUCET_ETH });
    return {
      identity,
      seller: sellerConfig(upstream),
      network: loopbackNetworkConfig({ bootstrap: [this.bootstrap.multiaddrs()[0]!] }),
      env: { FAKE_OPENAI_KEY: 'sk-fake' },
      dataDir: this.tempDir('paid-seller'),
      chain: this.chain.contract,
      tickIntervalMs: 0,
      ...extras,
    } satisfies StartPaidSellerOptions;
  }

  /** Starts a seller (stopped by `stop`) and waits until the buyer can reach it. */
  async startSeller(options: StartPaidSellerOptions): Promise<PaidSellerHandle> {
    const seller = await startPaidSeller(options);
    this.sellers.add(seller);
    await this.discover(seller);
    return seller;
  }

  async stopSeller(seller: PaidSellerHandle): Promise<void> {
    this.sellers.delete(seller);
    await seller.stop();
  }

  /** Refreshes the buyer until it reaches `seller` at its current addresses. */
  async discover(seller: PaidSellerHandle): Promise<void> {
    const current = seller.node.multiaddrs();
    await waitFor(
      async () => {
        await fetch(`${this.buyer.url}/_svc/peers/refresh`, { method: 'POST' });
        const route = this.buyer.directory.route(seller.node.peerId);
        return (
          this.buyer.directory.get(seller.node.peerId)?.reachable === true &&
          route?.addresses.some((address) => current.includes(address.toString())) === true
        );
      },
      45_000,
      `seller ${seller.node.peerId} discovered`,
    );
  }

  async channels(): Promise<Channel[]> {
    const reply = await fetch(`${this.buyer.url}/_svc/channels`);
    return ((await reply.json()) as { channels: Channel[] }).channels;
  }

  /** Stops the buyer and starts it again on the same data dir. */
  async restartBuyer(): Promise<PaidBuyerNode> {
    await this.stopBuyer();
    this.buyer = await startPaidBuyerNode(this.buyerOptions);
    this.buyerRunning = true;
    return this.buyer;
  }

  /** Stops the in-process buyer (e.g. to run it as a process on the same data dir). */
  async stopBuyer(): Promise<void> {
    if (!this.buyerRunning) return;
    this.buyerRunning = false;
    await this.buyer.stop();
  }

  async stop(): Promise<void> {
    await this.stopBuyer();
    for (const seller of this.sellers) await seller.stop();
    await this.bootstrap.stop();
    await this.chain.stop();
    for (const dir of this.dirs) removeTempDir(dir);
  }
}
