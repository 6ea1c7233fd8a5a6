/**
 * Moves USDC that arrives in an identity's wallet into its credits (spec 4.3: "usually within a
 * minute"). One pass per interval; a failing identity (no gas, RPC down) is logged and retried
 * next pass. Gas comes from the identity's own wallet.
 */
import type { PaymentsContract } from '../../chain/index.js';
import type { Logger } from '../../log/index.js';
import type { MicroUsd } from '../../money/index.js';
import type { IdentitySource } from './types.js';

export interface SweepResult {
  identity: string;
  depositedMicro: MicroUsd;
  error?: string;
}

export interface DepositSweeperOptions {
  identities: IdentitySource;
  contract: PaymentsContract;
  logger: Logger;
  /** 0 disables the timer. */
  intervalMs: number;
}

export class DepositSweeper {
  private readonly options: DepositSweeperOptions;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<SweepResult[]> | undefined;

  constructor(options: DepositSweeperOptions) {
    this.options = options;
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

  /** Deposits every loadable identity's wallet USDC; one pass at a time. */
  sweepOnce(): Promise<SweepResult[]> {
    this.running ??= this.sweep().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async sweep(): Promise<SweepResult[]> {
    const results: SweepResult[] = [];
    for (const listing of this.options.identities.list()) {
      if (!listing.loadable) continue;
      try {
        const { account } = this.options.identities.load(listing.name);
        const balance = await this.options.contract.usdcBalanceOf(account.address);
        if (balance === 0n) continue;
        await this.options.contract.deposit(account, balance);
        this.options.logger.info(
          { identity: listing.name, depositedMicro: balance.toString() },
          'deposited wallet USDC into credits',
        );
        results.push({ identity: listing.name, depositedMicro: balance });
      } catch (error) {
        const message =
          error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
        this.options.logger.warn(
          { identity: listing.name, err: message },
          'deposit sweep failed; retrying next pass',
        );
        results.push({ identity: listing.name, depositedMicro: 0n, error: message });
      }
    }
    return results;
  }
}
