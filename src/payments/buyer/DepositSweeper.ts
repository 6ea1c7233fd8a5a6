/**
 * Moves USDC that arrives in an identity's wallet into its credits ("usually within a
 * minute"). One pass per interval. Every deposit is an EIP-3009 authorization signed by the
 * identity and submitted with `depositWithAuthorization` (decision 080): by the wallet itself when
 * it holds ETH, otherwise by the relayer identity, so a wallet funded only with USDC (an x402
 * top-up) needs no gas. An authorization is kept until the chain shows it used or it expires, so a
 * lost answer is resolved by reading its nonce — never by depositing twice. A pass that cannot pay
 * gas logs one line naming the address to fund; other failures are logged and retried next pass.
 */
import type { Address } from 'viem';
import type { LocalAccount } from 'viem/accounts';
import {
  type DepositAuthorization,
  isAuthorizationUsed,
  type PaymentsContract,
  signDepositAuthorization,
  submitDepositAuthorization,
} from '../../chain/index.js';
import { errorFirstLine, errorMessage } from '../../errors/index.js';
import { DEFAULT_IDENTITY } from '../../identity/index.js';
import type { Logger } from '../../log/index.js';
import type { MicroUsd } from '../../money/index.js';
import {
  chooseGasPayer,
  type GasPayer,
  type GasShortfall,
  type RelayerResolution,
} from './depositGas.js';
import type { IdentitySource } from './types.js';

export interface SweepResult {
  identity: string;
  depositedMicro: MicroUsd;
  /** Who paid the deposit's gas: the identity's own wallet or the relayer identity. */
  gasPaidBy?: 'self' | 'relayer';
  error?: string;
  /** Set when the deposit waits for gas: send ETH here. */
  fundAddress?: Address;
}

/** What a sweep of one identity would do now (for `svc buyer deposit`). */
export interface SweepPlan {
  identity: string;
  walletMicro: MicroUsd;
  /** Undefined when the wallet holds no USDC. */
  gas?: { kind: 'self' } | { kind: 'relayer'; identity: string; address: Address } | GasShortfall;
}

export interface DepositSweeperOptions {
  identities: IdentitySource;
  contract: PaymentsContract;
  logger: Logger;
  /** 0 disables the timer. */
  intervalMs: number;
  /** Identity paying gas for wallets without ETH (`chain.payments.relayerIdentity`). Default "default". */
  relayerIdentity?: string;
}

/** Lifetime of a deposit authorization; it is reused (same nonce) until close to expiry. */
const AUTHORIZATION_TTL_SECONDS = 3600n;
/** An authorization this close to expiry is replaced instead of resubmitted. */
const EXPIRY_MARGIN_SECONDS = 120n;

export class DepositSweeper {
  private readonly options: DepositSweeperOptions;
  private readonly relayerIdentity: string;
  /** Authorizations signed but not yet seen used on chain, by identity name. */
  private readonly pending = new Map<string, DepositAuthorization>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<SweepResult[]> | undefined;

  constructor(options: DepositSweeperOptions) {
    this.options = options;
    this.relayerIdentity = options.relayerIdentity ?? DEFAULT_IDENTITY;
  }

  start(): void {
    if (this.options.intervalMs <= 0 || this.timer) return;
    void this.sweepOnce();
    this.timer = setInterval(() => void this.sweepOnce(), this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Deposits every loadable identity's wallet USDC (or only `only`); one pass at a time. */
  sweepOnce(only?: string): Promise<SweepResult[]> {
    // Timer passes coalesce with a running pass; a pass for one identity waits for it instead.
    if (only === undefined && this.running) return this.running;
    const previous = this.running;
    const pass = async () => {
      await previous?.catch(() => undefined);
      return this.sweep(only);
    };
    const run = pass().finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    return run;
  }

  /** What sweeping `identity` now would do, without signing anything that leaves the process. */
  async plan(identity: string): Promise<SweepPlan> {
    const { account } = this.options.identities.load(identity);
    const walletMicro = await this.options.contract.usdcBalanceOf(account.address);
    if (walletMicro === 0n) return { identity, walletMicro };
    const auth = await this.authorizationFor(identity, account, walletMicro, false);
    const payer = await chooseGasPayer({
      contract: this.options.contract,
      identity,
      owner: account,
      relayer: this.resolveRelayer(),
      auth,
    });
    const gas: SweepPlan['gas'] =
      payer.kind === 'relayer'
        ? { kind: 'relayer', identity: payer.identity, address: payer.account.address }
        : payer.kind === 'self'
          ? { kind: 'self' }
          : payer;
    return { identity, walletMicro, gas };
  }

  private async sweep(only: string | undefined): Promise<SweepResult[]> {
    const results: SweepResult[] = [];
    const waiting: { result: SweepResult; shortfall: GasShortfall }[] = [];
    let relayer: RelayerResolution | undefined;
    const relayerOnce = () => (relayer ??= this.resolveRelayer());
    for (const listing of this.options.identities.list()) {
      if (!listing.loadable || (only !== undefined && listing.name !== only)) continue;
      try {
        const outcome = await this.sweepIdentity(listing.name, relayerOnce);
        if (!outcome) continue;
        results.push(outcome.result);
        if (outcome.shortfall)
          waiting.push({ result: outcome.result, shortfall: outcome.shortfall });
      } catch (error) {
        const message = errorFirstLine(error);
        this.options.logger.warn(
          { identity: listing.name, err: message },
          'deposit sweep failed; retrying next pass',
        );
        results.push({ identity: listing.name, depositedMicro: 0n, error: message });
      }
    }
    if (waiting.length > 0) this.logWaiting(waiting);
    return results;
  }

  private async sweepIdentity(
    identity: string,
    relayer: () => RelayerResolution,
  ): Promise<{ result: SweepResult; shortfall?: GasShortfall } | undefined> {
    const { contract } = this.options;
    const { account } = this.options.identities.load(identity);
    let confirmedMicro = 0n;
    const earlier = this.pending.get(identity);
    if (earlier && (await isAuthorizationUsed(contract, earlier))) {
      // A previous pass lost the answer, but its deposit landed.
      this.pending.delete(identity);
      confirmedMicro = earlier.valueMicro;
      this.logDeposited(identity, earlier.valueMicro, 'confirmed');
    }
    const walletMicro = await contract.usdcBalanceOf(account.address);
    if (walletMicro === 0n) {
      return confirmedMicro > 0n
        ? { result: { identity, depositedMicro: confirmedMicro } }
        : undefined;
    }
    const auth = await this.authorizationFor(identity, account, walletMicro, true);
    const payer = await chooseGasPayer({
      contract,
      identity,
      owner: account,
      relayer: relayer(),
      auth,
    });
    if (payer.kind === 'shortfall') {
      return {
        result: {
          identity,
          depositedMicro: confirmedMicro,
          error: payer.message,
          fundAddress: payer.fundAddress,
        },
        shortfall: payer,
      };
    }
    await this.submit(auth, payer);
    this.pending.delete(identity);
    this.logDeposited(identity, auth.valueMicro, payer.kind);
    return {
      result: { identity, depositedMicro: confirmedMicro + auth.valueMicro, gasPaidBy: payer.kind },
    };
  }

  /** Submits; when the answer is lost but the nonce shows the deposit landed, that is success. */
  private async submit(auth: DepositAuthorization, payer: GasPayer): Promise<void> {
    try {
      await submitDepositAuthorization(this.options.contract, payer.account, auth);
    } catch (error) {
      const landed = await isAuthorizationUsed(this.options.contract, auth).catch(() => false);
      if (!landed) throw error;
    }
  }

  /**
   * The identity's pending authorization when it can still land (unexpired, covered by the
   * wallet), else a new one for the whole wallet balance (kept as pending when `keep`).
   */
  private async authorizationFor(
    identity: string,
    account: LocalAccount,
    walletMicro: MicroUsd,
    keep: boolean,
  ): Promise<DepositAuthorization> {
    const now = BigInt(await this.options.contract.chainTime());
    const earlier = this.pending.get(identity);
    if (
      earlier &&
      earlier.validBefore > now + EXPIRY_MARGIN_SECONDS &&
      earlier.valueMicro <= walletMicro
    ) {
      return earlier;
    }
    const auth = await signDepositAuthorization(account, this.options.contract, {
      valueMicro: walletMicro,
      validAfter: 0n,
      validBefore: now + AUTHORIZATION_TTL_SECONDS,
    });
    if (keep) this.pending.set(identity, auth);
    return auth;
  }

  private resolveRelayer(): RelayerResolution {
    const identity = this.relayerIdentity;
    try {
      return { identity, account: this.options.identities.load(identity).account };
    } catch (error) {
      return { identity, error: errorMessage(error) };
    }
  }

  private logDeposited(identity: string, micro: MicroUsd, how: 'self' | 'relayer' | 'confirmed') {
    this.options.logger.info(
      {
        identity,
        depositedMicro: micro.toString(),
        ...(how === 'confirmed' ? { confirmedLater: true } : { gasPaidBy: how }),
      },
      'deposited wallet USDC into credits',
    );
  }

  /** One line per pass, naming every address to fund (never one line per identity). */
  private logWaiting(waiting: { result: SweepResult; shortfall: GasShortfall }[]): void {
    const byAddress = new Map<Address, { fundIdentity: string; identities: string[] }>();
    for (const { result, shortfall } of waiting) {
      const entry = byAddress.get(shortfall.fundAddress) ?? {
        fundIdentity: shortfall.fundIdentity,
        identities: [],
      };
      entry.identities.push(result.identity);
      byAddress.set(shortfall.fundAddress, entry);
    }
    const message =
      waiting.length === 1
        ? waiting[0]!.shortfall.message
        : `Wallet USDC of ${waiting.length} identities waits for gas: ${[...byAddress]
            .map(
              ([address, entry]) =>
                `send ETH to ${address} (identity "${entry.fundIdentity}") for ${entry.identities.join(', ')}`,
            )
            .join('; ')}.`;
    this.options.logger.warn(
      {
        fundAddresses: [...byAddress.keys()],
        waiting: waiting.map(({ result }) => result.identity),
        relayerIdentity: this.relayerIdentity,
      },
      `deposit sweep waiting for gas: ${message}`,
    );
  }
}
