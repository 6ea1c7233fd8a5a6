/**
 * `POST /v1/key/topup`: the whole x402 v2 exchange for one key, independent of the
 * HTTP framework. Order matters and is the point of this file:
 *   rules (403) -> amount (400) -> challenge (402) -> decode + own checks (402) ->
 *   pending row (exactly once) -> facilitator verify -> facilitator settle -> credit -> 200.
 * Nothing is credited unless the facilitator reports a settled transaction.
 */
import { randomUUID } from 'node:crypto';
import type { FacilitatorClient } from '@x402/core/server';
import type { SettleResponse } from '@x402/core/types';
import type { Address } from 'viem';
import { isSvcError, SvcError, toSvcError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { formatUsd } from '../money/index.js';
import { parseTopupAmount } from './amount.js';
import type { TopupChainReader } from './chainReader.js';
import { paymentRequired, topupRequirements } from './challenge.js';
import { checkPayment } from './checkPayment.js';
import { DEFAULT_MAX_TIMEOUT_SECONDS, type TopupAsset } from './constants.js';
import { type DecodedPayment, decodePayment } from './decodePayment.js';
import { settleWith, verifyWith } from './facilitator/callFacilitator.js';
import type { TopupLedger, TopupRow } from './ledger/TopupLedger.js';
import { type ReconcileResult, reconcilePendingTopups } from './reconcile.js';
import { refusalReason, refusePayment } from './refusal.js';
import { errorReply, successReply } from './reply.js';
import { checkTopupAllowed } from './topupAllowed.js';
import type { TopupBounds, TopupReply, TopupRequest } from './types.js';

export interface TopupServiceOptions {
  ledger: TopupLedger;
  facilitator: FacilitatorClient;
  chain: TopupChainReader;
  /** The chain's USDC (Base USDC in production). */
  asset: TopupAsset;
  bounds: TopupBounds;
  /** Milliseconds since the epoch; tests pass their own. */
  clock?: () => number;
  logger?: Logger;
  maxTimeoutSeconds?: number;
  /** How often pending rows are reconciled after start (default 30 s; 0 = only at start). */
  reconcileIntervalMs?: number;
}

/** Reasons a facilitator gives when the payer lacks funds (EIP-3009 exact scheme). */
const INSUFFICIENT = /insufficient/i;

export class TopupService {
  private readonly options: TopupServiceOptions;
  private readonly clock: () => number;
  private timer: NodeJS.Timeout | undefined;
  private reconciling: Promise<ReconcileResult> | undefined;

  constructor(options: TopupServiceOptions) {
    this.options = options;
    this.clock = options.clock ?? Date.now;
  }

  /**
   * Reconciles pending rows now, then periodically. A chain that cannot be read at start is
   * logged, not fatal: the periodic pass retries and pending rows simply wait.
   */
  async start(): Promise<ReconcileResult | undefined> {
    let first: ReconcileResult | undefined;
    try {
      first = await this.reconcile();
    } catch (error) {
      this.options.logger?.warn({ err: error }, 'top-up reconcile at start failed; retrying later');
    }
    const every = this.options.reconcileIntervalMs ?? 30_000;
    if (every > 0) {
      this.timer = setInterval(() => {
        this.reconcile().catch((error: unknown) =>
          this.options.logger?.warn({ err: error }, 'top-up reconcile failed; retrying later'),
        );
      }, every);
      this.timer.unref();
    }
    return first;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.reconciling?.catch(() => undefined);
  }

  /** One reconcile pass (concurrent callers share it). */
  reconcile(): Promise<ReconcileResult> {
    this.reconciling ??= reconcilePendingTopups({
      ledger: this.options.ledger,
      chain: this.options.chain,
      clock: this.clock,
      logger: this.options.logger,
    }).finally(() => {
      this.reconciling = undefined;
    });
    return this.reconciling;
  }

  /** Answers one `POST /v1/key/topup`. Never throws: every outcome is a reply. */
  async handle(request: TopupRequest): Promise<TopupReply> {
    try {
      return await this.handleOrThrow(request);
    } catch (error) {
      const svcError = toSvcError(error);
      if (svcError.code === 'internal_error') {
        this.options.logger?.error({ err: error, keyId: request.key.keyId }, 'top-up failed');
      }
      return errorReply(svcError);
    }
  }

  private async handleOrThrow(request: TopupRequest): Promise<TopupReply> {
    const { key } = request;
    checkTopupAllowed(key);
    const amountMicro = parseTopupAmount(request.body, this.options.bounds);
    const requirements = topupRequirements({
      asset: this.options.asset,
      payTo: key.walletAddress,
      amountMicro,
      maxTimeoutSeconds: this.options.maxTimeoutSeconds ?? DEFAULT_MAX_TIMEOUT_SECONDS,
    });
    const challengeFor = (error?: string) =>
      paymentRequired(requirements, request.resourceUrl, key.keyId, error);

    if (!request.paymentSignature) {
      return errorReply(
        new SvcError('payment_required', {
          message: `Pay ${formatUsd(amountMicro)} USD as the PAYMENT-REQUIRED header describes (x402 v2), then repeat this request with PAYMENT-SIGNATURE.`,
        }),
        { challenge: challengeFor() },
      );
    }

    let payment: DecodedPayment;
    try {
      payment = decodePayment(request.paymentSignature);
      await checkPayment(payment, requirements, Math.floor(this.clock() / 1000));
      await this.checkFunds(payment);
    } catch (error) {
      if (isSvcError(error) && error.code === 'topup_payment_invalid') {
        return errorReply(error, { challenge: challengeFor(refusalReason(error)) });
      }
      throw error;
    }

    const auth = payment.authorization;
    const fromBlock = await readChain(() => this.options.chain.blockNumber());
    const { row, created } = await ledgerCall(() =>
      this.options.ledger.beginTopup({
        id: `topup_${randomUUID()}`,
        keyId: key.keyId,
        network: requirements.network,
        asset: requirements.asset as Address,
        payer: auth.from,
        nonce: auth.nonce,
        payTo: requirements.payTo as Address,
        amountMicro,
        validBefore: auth.validBefore,
        fromBlock,
        atMs: this.clock(),
      }),
    );
    if (!created) return this.alreadyKnown(row);

    const verdict = await this.guard(row, () =>
      verifyWith(this.options.facilitator, payment.payload, requirements),
    );
    if (!verdict.isValid) {
      await ledgerCall(() =>
        this.options.ledger.failTopup(row.id, verdict.invalidReason ?? 'invalid', this.clock()),
      );
      const error = refusePayment(
        INSUFFICIENT.test(verdict.invalidReason ?? '')
          ? 'insufficient_funds'
          : 'facilitator_rejected',
        `The facilitator rejected the payment (${verdict.invalidReason ?? 'no reason given'}).`,
        verdict.invalidReason,
      );
      return errorReply(error, { challenge: challengeFor(refusalReason(error)) });
    }

    // From here on the money may move: a thrown settle leaves the row pending for reconcile.
    const settle = await settleWith(this.options.facilitator, payment.payload, requirements);
    if (!settle.success) return this.settleFailed(row, settle);
    return this.credit(row, settle);
  }

  /** Runs a facilitator call made before settle; on failure the row is failed (nothing moved). */
  private async guard<T>(row: TopupRow, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      // If this write fails too, the row stays pending and the reconciler fails it at expiry.
      await this.options.ledger
        .failTopup(row.id, 'facilitator_unreachable', this.clock())
        .catch(() => undefined);
      throw error;
    }
  }

  private async checkFunds(payment: DecodedPayment): Promise<void> {
    const auth = payment.authorization;
    const balance = await readChain(() =>
      this.options.chain.balanceOf(payment.payload.accepted.asset as Address, auth.from),
    );
    if (balance < auth.value) {
      throw refusePayment(
        'insufficient_funds',
        `The payer ${auth.from} holds ${formatUsd(balance)} USDC, less than the ${formatUsd(auth.value)} authorized.`,
      );
    }
  }

  private alreadyKnown(row: TopupRow): TopupReply {
    if (row.state === 'credited') {
      return errorReply(
        new SvcError('topup_payment_replayed', {
          details: { transaction: row.transaction, topup_id: row.id },
        }),
      );
    }
    return errorReply(
      new SvcError('topup_pending', {
        details: { topup_id: row.id },
        headers: { 'Retry-After': '10' },
      }),
    );
  }

  private async settleFailed(row: TopupRow, settle: SettleResponse): Promise<TopupReply> {
    const reason = settle.errorReason ?? 'settlement_failed';
    if (reason === 'settlement_pending') {
      // Broadcast but unconfirmed: the reconciler credits it once the chain shows it.
      return errorReply(
        new SvcError('topup_pending', {
          details: { topup_id: row.id, transaction: settle.transaction || null },
          headers: { 'Retry-After': '10' },
        }),
        { settle },
      );
    }
    await ledgerCall(() => this.options.ledger.failTopup(row.id, reason, this.clock()));
    this.options.logger?.info(
      { topupId: row.id, keyId: row.keyId, reason },
      'top-up settlement failed',
    );
    const error = refusePayment(
      INSUFFICIENT.test(reason) ? 'insufficient_funds' : 'settlement_failed',
      `Settlement failed (${reason}); nothing was credited.`,
      reason,
    );
    return errorReply(error, { settle: { ...settle, success: false } });
  }

  private async credit(row: TopupRow, settle: SettleResponse): Promise<TopupReply> {
    try {
      // false = the reconciler credited it first; it is credited exactly once either way.
      await this.options.ledger.creditTopup(row.id, settle.transaction, this.clock());
    } catch (error) {
      this.options.logger?.error(
        { err: error, topupId: row.id },
        'settled top-up not yet credited; the reconciler will',
      );
      return errorReply(
        new SvcError('topup_pending', {
          details: { topup_id: row.id, transaction: settle.transaction },
          headers: { 'Retry-After': '10' },
        }),
        { settle },
      );
    }
    // Credited already: a failing read of the new total must not turn this into an error.
    const toppedUp = await this.options.ledger.toppedUpMicro(row.keyId).catch(() => null);
    this.options.logger?.info(
      {
        topupId: row.id,
        keyId: row.keyId,
        amountUsd: formatUsd(row.amountMicro),
        transaction: settle.transaction,
      },
      'top-up credited',
    );
    return successReply(settle, {
      data: {
        topup_id: row.id,
        key_id: row.keyId,
        amount_usd: formatUsd(row.amountMicro),
        topped_up_usd: toppedUp === null ? null : formatUsd(toppedUp),
        transaction: settle.transaction,
        network: settle.network,
        payer: settle.payer ?? row.payer,
      },
    });
  }
}

/** A chain read on the request path; an unreachable RPC is 503 `chain_unavailable`, not a 500. */
async function readChain<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw new SvcError('chain_unavailable', {
      message:
        'The chain RPC cannot be read to check this payment; nothing was charged. Retry shortly.',
      cause: error,
    });
  }
}

/** A ledger write on the request path; a failing store is 503 `store_unavailable`, not a 500. */
async function ledgerCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new SvcError('store_unavailable', { cause: error });
  }
}
