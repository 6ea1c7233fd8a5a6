/**
 * A seller buys its own trust score: it funds fresh wallets, and each "buyer" deposits, opens a
 * channel with it and pays it, on a real anvil chain with the real contract. The score is read
 * the way the buyer reads it (`ReputationReader` over `sellerStatsBatch`). The test reports what
 * the seller cannot get back: gas, priced at Base's rates below, and USDC that did not return.
 * Before decision 167 (the score of decision 036, `uncappedTrustScore`) three keys passed the
 * default gate within minutes for cents; with the new-seller cap no volume passes it in the first
 * 30 days, and after them the same cents do (docs/decisions/167-trust-score-new-seller-cap.md).
 */
import { type Hex, maxUint256 } from 'viem';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OnChainSellerStats } from '../chain/index.js';
import { DEFAULT_FAUCET_ETH, type LocalChain, startLocalChain } from '../chain/index.js';
import { defaultConfig } from '../config/index.js';
import { SvcPaymentsAbi, TestUSDCAbi } from '../contracts/index.js';
import { formatUsd, MICRO_PER_USD } from '../money/index.js';
import {
  NEW_SELLER_DAYS,
  NEW_SELLER_SCORE_CAP,
  ReputationReader,
  uncappedTrustScore,
} from './reputation.js';
import { channelIdOf, type PaymentsDomain, signReserve, signVoucher } from './signatures.js';

/**
 * Gas price on Base: 0.05 gwei, ten times the L2 minimum base fee of 0.005 gwei (Base docs,
 * "Network fees"), so it also covers the L1 data fee, which those docs say is usually the larger
 * part, in normal conditions.
 */
const BASE_GAS_PRICE_WEI = 50_000_000n;
/** ETH at 4,000 USD: a round figure above most of 2025's range, so costs are not understated. */
const ETH_USD_MICRO = 4_000n * MICRO_PER_USD;
const WEI_PER_ETH = 10n ** 18n;
/** The product's default trust gate (`buyer.routingPreferences.minTrustScore`). */
const GATE = defaultConfig().buyer.routingPreferences.minTrustScore;
/** What the seller cycles through its fake buyers: every cent comes back to it on settlement. */
const CAPITAL_MICRO = 400n * MICRO_PER_USD;
/** Where the buyer part of the score saturates: more keys add nothing. */
const MAX_FAKE_BUYERS = 50;
const DAY_SECONDS = 86_400;

/** What the seller has spent and what the buyer's reader says, at one moment. */
interface Observation {
  /** The buyer's score (`ReputationReader`, the rule of decision 167). */
  score: number | null;
  /** Decision 036's score of the same stats at the same chain time (no cap). */
  scoreBefore: number | null;
  stats: OnChainSellerStats;
  transactions: number;
  notBackMicro: bigint;
  unrecoverableMicro: bigint;
}

/** Gas priced in micro-USD at the rates above, rounded up. */
function gasCostMicro(gas: bigint): bigint {
  const numerator = gas * BASE_GAS_PRICE_WEI * ETH_USD_MICRO;
  return (numerator + WEI_PER_ETH - 1n) / WEI_PER_ETH;
}

let chain: LocalChain;

beforeAll(async () => {
  chain = await startLocalChain();
});

afterAll(async () => {
  await chain?.stop();
});

/** A seller dealing with itself; every transaction it sends is counted. */
class SelfDealer {
  readonly seller: PrivateKeyAccount = privateKeyToAccount(generatePrivateKey());
  gasUsed = 0n;
  transactions = 0;
  fakeBuyers = 0;
  private startUsdcMicro = 0n;

  constructor(private readonly chain: LocalChain) {}

  private get domain(): PaymentsDomain {
    return {
      chainId: this.chain.contract.chainId,
      paymentsAddress: this.chain.deployment.paymentsAddress,
    };
  }

  /** Gas money and the capital it cycles (not counted as spent: it is measured as it returns). */
  async prepare(): Promise<void> {
    await this.chain.faucet(this.seller.address, {
      ethWei: DEFAULT_FAUCET_ETH,
      usdcMicro: CAPITAL_MICRO,
    });
    this.startUsdcMicro = await this.chain.contract.usdcBalanceOf(this.seller.address);
    await this.send({
      address: this.chain.deployment.usdcAddress,
      abi: TestUSDCAbi,
      functionName: 'approve',
      args: [this.chain.deployment.paymentsAddress, maxUint256],
    });
  }

  /**
   * One fake buyer: a fresh key that never holds ETH. The seller deposits its capital into the
   * key's credits, opens a channel on the key's Reserve signature and closes it with the key's
   * voucher for the whole lock, so all of it is settled back to the seller: three transactions.
   */
  async dealOnce(amountMicro = CAPITAL_MICRO): Promise<void> {
    const buyer = privateKeyToAccount(generatePrivateKey());
    const salt = `0x${'00'.repeat(31)}01` as Hex;
    const channelId = channelIdOf(buyer.address, this.seller.address, salt);
    const deadline = BigInt((await this.chain.contract.chainTime()) + 3_600);
    await this.send({
      address: this.chain.deployment.paymentsAddress,
      abi: SvcPaymentsAbi,
      functionName: 'deposit',
      args: [buyer.address, amountMicro],
    });
    const reserve = await signReserve(buyer, this.domain, {
      channelId,
      buyer: buyer.address,
      seller: this.seller.address,
      maxAmount: amountMicro,
      deadline,
    });
    await this.send({
      address: this.chain.deployment.paymentsAddress,
      abi: SvcPaymentsAbi,
      functionName: 'openChannel',
      args: [buyer.address, salt, amountMicro, deadline, reserve],
    });
    const voucher = await signVoucher(buyer, this.domain, {
      channelId,
      cumulativeAmount: amountMicro,
    });
    await this.send({
      address: this.chain.deployment.paymentsAddress,
      abi: SvcPaymentsAbi,
      functionName: 'close',
      args: [channelId, amountMicro, voucher],
    });
    this.fakeBuyers += 1;
  }

  /** USDC the seller started with and no longer holds (fake buyers' credits are empty). */
  async usdcNotBackMicro(): Promise<bigint> {
    return this.startUsdcMicro - (await this.chain.contract.usdcBalanceOf(this.seller.address));
  }

  /** Reads the score as the buyer does and prints what the seller spent so far. */
  async observe(reader: ReputationReader, label: string): Promise<Observation> {
    const { score, stats } = (await reader.read([this.seller.address]))[0]!;
    const scoreBefore = uncappedTrustScore(stats, await this.chain.contract.chainTime());
    const notBackMicro = await this.usdcNotBackMicro();
    const gasMicro = gasCostMicro(this.gasUsed);
    const unrecoverableMicro = gasMicro + notBackMicro;
    const verdict = (value: number | null) =>
      `${value}${value !== null && value >= GATE ? ' (passes)' : ''}`;
    console.log(
      `${label}: score ${verdict(score)}, decision-036 score ${verdict(scoreBefore)}, gate ` +
        `${GATE}; ${this.fakeBuyers} fake buyers, ${formatUsd(stats.settledVolumeMicro)} USD ` +
        `settled, ${this.transactions} transactions, ${this.gasUsed} gas = ` +
        `${formatUsd(gasMicro)} USD, ${formatUsd(notBackMicro)} USD not back: unrecoverable ` +
        `${formatUsd(unrecoverableMicro)} USD`,
    );
    return {
      score,
      scoreBefore,
      stats,
      transactions: this.transactions,
      notBackMicro,
      unrecoverableMicro,
    };
  }

  private async send(
    request: Parameters<ReturnType<LocalChain['clients']['senderFor']>['write']>[0],
  ) {
    const receipt = await this.chain.clients.senderFor(this.seller).write(request);
    this.gasUsed += receipt.gasUsed;
    this.transactions += 1;
  }
}

/** Moves chain time to `days` after `from` (unix seconds). */
async function warpTo(from: number, days: number): Promise<void> {
  const seconds = from + days * DAY_SECONDS - (await chain.contract.chainTime());
  if (seconds > 0) await chain.increaseTime(seconds);
}

describe('a seller buying its trust score from itself (sybil buyers)', () => {
  it('passed the old gate on day one for cents; now no volume passes it before day 30', {
    timeout: 180_000,
  }, async () => {
    console.log(
      `prices: ${Number(BASE_GAS_PRICE_WEI) / 1e9} gwei per gas, ${formatUsd(ETH_USD_MICRO)} ` +
        `USD per ETH; capital cycled ${formatUsd(CAPITAL_MICRO)} USD (it comes back)`,
    );
    const reader = new ReputationReader({ contract: chain.contract, cacheTtlMs: 0 });
    const attacker = new SelfDealer(chain);
    await attacker.prepare();
    let seen: Observation;
    do {
      await attacker.dealOnce();
      seen = await attacker.observe(reader, 'day 0');
    } while ((seen.scoreBefore ?? 0) < GATE && attacker.fakeBuyers < MAX_FAKE_BUYERS);
    // Before: decision 036's score passed the gate at once, and nothing but gas was spent.
    expect(seen.scoreBefore).toBeGreaterThanOrEqual(GATE);
    expect(seen.notBackMicro).toBe(0n);
    expect(seen.unrecoverableMicro).toBeLessThan(100n * MICRO_PER_USD);
    // After: the same stats are capped below the gate.
    expect(seen.score).toBe(NEW_SELLER_SCORE_CAP);

    const first = seen.stats.firstSettlementAt;
    await warpTo(first, 1);
    const day1 = await attacker.observe(reader, 'day 1');
    expect(day1.scoreBefore).toBeGreaterThanOrEqual(GATE);
    expect(day1.score).toBe(NEW_SELLER_SCORE_CAP);

    // The seller goes all out: every part the score rewards saturates except age.
    while (attacker.fakeBuyers < MAX_FAKE_BUYERS) await attacker.dealOnce();
    const allOut = await attacker.observe(reader, 'day 1, all out');
    expect(allOut.scoreBefore).toBeGreaterThanOrEqual(80);
    expect(allOut.score).toBe(NEW_SELLER_SCORE_CAP);
    expect(allOut.notBackMicro).toBe(0n);

    // Fresh volume late in the window does not help either.
    await warpTo(first, NEW_SELLER_DAYS - 1);
    await attacker.dealOnce();
    const day29 = await attacker.observe(reader, `day ${NEW_SELLER_DAYS - 1}`);
    expect(day29.score).toBe(NEW_SELLER_SCORE_CAP);
    expect(day29.score).toBeLessThan(GATE);

    // What the rule does not stop: once the first settlement is 30 days old the cap lifts, and
    // the stats bought on day 0 pass the gate without one more transaction (decision 167).
    await warpTo(first, NEW_SELLER_DAYS + 1);
    const day31 = await attacker.observe(reader, `day ${NEW_SELLER_DAYS + 1}`);
    expect(day31.transactions).toBe(day29.transactions);
    expect(day31.score).toBeGreaterThanOrEqual(GATE);
    expect(day31.score).toBe(day31.scoreBefore);
    expect(day31.notBackMicro).toBe(0n);
  });

  it('a pre-aged identity: one 1-micro-USD settlement starts the clock, and after 30 days the cheap attack passes', {
    timeout: 180_000,
  }, async () => {
    const reader = new ReputationReader({ contract: chain.contract, cacheTtlMs: 0 });
    const attacker = new SelfDealer(chain);
    await attacker.prepare();
    await attacker.dealOnce(1n);
    const started = await attacker.observe(reader, 'clock started');
    expect(started.score).toBeLessThan(GATE);
    await warpTo(started.stats.firstSettlementAt, NEW_SELLER_DAYS + 1);
    let seen: Observation;
    do {
      await attacker.dealOnce();
      seen = await attacker.observe(reader, `day ${NEW_SELLER_DAYS + 1}`);
    } while ((seen.score ?? 0) < GATE && attacker.fakeBuyers < MAX_FAKE_BUYERS);
    expect(seen.score).toBeGreaterThanOrEqual(GATE);
    expect(seen.notBackMicro).toBe(0n);
    // The rule costs time, not money: well under the 100 USD a money barrier would need.
    expect(seen.unrecoverableMicro).toBeLessThan(100n * MICRO_PER_USD);
  });
});
