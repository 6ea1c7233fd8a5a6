/**
 * The churn test's money check: what the buyers signed (their channels), what each seller's
 * ledger holds (its `payments/seller.db`, read after it stopped), what the chain says of each
 * channel, and what the gateway recorded as spent. Amounts are micro-USD bigints.
 */

import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { PaymentsContract } from '../../src/chain/index.js';
import { parseUsd } from '../../src/money/index.js';

interface BuyerChannel {
  channelId: string;
  seller: string;
  status: string;
  requests: number;
  lockMicro: string;
  signedMicro: string;
  settledMicro: string;
}

interface SellerRow {
  channel_id: string;
  lock_micro: string;
  settled_micro: string;
  voucher_micro: string;
  billed_micro: string;
  status: string;
}

export async function buyerChannels(buyerUrl: string): Promise<BuyerChannel[]> {
  const reply = await fetch(`${buyerUrl}/_svc/channels`);
  return ((await reply.json()) as { channels: BuyerChannel[] }).channels;
}

/** A stopped seller's channels, by channel id (lower case). */
export function sellerLedger(dataDir: string): Map<string, SellerRow> {
  const db = new DatabaseSync(join(dataDir, 'payments', 'seller.db'), { readOnly: true });
  try {
    const rows = db.prepare('SELECT * FROM channels').all() as unknown as SellerRow[];
    return new Map(rows.map((row) => [row.channel_id.toLowerCase(), row]));
  } finally {
    db.close();
  }
}

/** The gateway's recorded spend of a key (its `GET /v1/key`). */
export async function gatewaySpend(gatewayUrl: string, key: string): Promise<bigint> {
  const reply = await fetch(`${gatewayUrl}/v1/key`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const view = (await reply.json()) as { data: { usage: { spent_usd: string } } };
  return parseUsd(view.data.usage.spent_usd);
}

export interface MoneySummary {
  channels: number;
  /** Channels with a signed reserve that no one opened on chain yet. */
  pendingOpens: number;
  /** Sum of what the buyers signed, per buyer. */
  signedMicro: Record<string, string>;
  /** Sum of the sellers' highest vouchers received. */
  sellerVoucherMicro: string;
  sellerBilledMicro: string;
  gatewaySpentMicro: string;
  /** Every disagreement found, one line each (empty when all agree). */
  disagreements: string[];
}

/**
 * Per channel: the buyer's signed total equals the seller's voucher, and the chain holds it open
 * with the lock and settlement both sides recorded. Overall: the gateway's buyer signed what the
 * gateway recorded as spent.
 */
export async function reconcile(args: {
  buyers: Record<string, BuyerChannel[]>;
  sellers: Map<string, SellerRow>[];
  contract: PaymentsContract;
  gatewayBuyer: string;
  gatewaySpent: bigint;
}): Promise<MoneySummary> {
  const disagreements: string[] = [];
  const ledger = new Map<string, SellerRow>();
  for (const seller of args.sellers) for (const [id, row] of seller) ledger.set(id, row);
  const signed: Record<string, bigint> = {};
  let channels = 0;
  let pendingOpens = 0;
  for (const [buyer, list] of Object.entries(args.buyers)) {
    signed[buyer] = 0n;
    for (const channel of list) {
      channels++;
      const id = channel.channelId.toLowerCase();
      const mine = BigInt(channel.signedMicro);
      signed[buyer] += mine;
      const row = ledger.get(id);
      const theirs = row ? BigInt(row.voucher_micro) : 0n;
      if (mine !== theirs) {
        disagreements.push(`${buyer} ${id}: signed ${mine}, seller holds ${theirs}`);
      }
      const onChain = await args.contract.readChannel(id as `0x${string}`);
      if (onChain.status === 'none' && channel.lockMicro === '0') {
        // Not opened on chain yet: the seller opens it with the buyer's signed reserve when it
        // settles (or the buyer closes it once the reserve expired). Both ledgers still agree.
        pendingOpens++;
        continue;
      }
      if (onChain.status !== channel.status) {
        disagreements.push(`${buyer} ${id}: ${channel.status} here, ${onChain.status} on chain`);
      }
      if (onChain.lockedMicro !== BigInt(channel.lockMicro)) {
        disagreements.push(
          `${buyer} ${id}: lock ${channel.lockMicro} here, ${onChain.lockedMicro} on chain`,
        );
      }
      if (row && BigInt(row.lock_micro) !== onChain.lockedMicro) {
        disagreements.push(`${id}: seller lock ${row.lock_micro}, ${onChain.lockedMicro} on chain`);
      }
      if (row && BigInt(row.settled_micro) !== onChain.settledMicro) {
        disagreements.push(
          `${id}: seller settled ${row.settled_micro}, ${onChain.settledMicro} on chain`,
        );
      }
      if (BigInt(channel.settledMicro) !== onChain.settledMicro) {
        disagreements.push(
          `${buyer} ${id}: settled ${channel.settledMicro} here, ${onChain.settledMicro} on chain`,
        );
      }
    }
  }
  const gatewaySigned = signed[args.gatewayBuyer] ?? 0n;
  if (gatewaySigned !== args.gatewaySpent) {
    disagreements.push(`gateway spent ${args.gatewaySpent}, its buyer signed ${gatewaySigned}`);
  }
  let vouchers = 0n;
  let billed = 0n;
  for (const row of ledger.values()) {
    vouchers += BigInt(row.voucher_micro);
    billed += BigInt(row.billed_micro);
  }
  const total = Object.values(signed).reduce((a, b) => a + b, 0n);
  if (vouchers !== total) disagreements.push(`sellers hold ${vouchers}, buyers signed ${total}`);
  return {
    channels,
    pendingOpens,
    signedMicro: Object.fromEntries(Object.entries(signed).map(([k, v]) => [k, v.toString()])),
    sellerVoucherMicro: vouchers.toString(),
    sellerBilledMicro: billed.toString(),
    gatewaySpentMicro: args.gatewaySpent.toString(),
    disagreements,
  };
}
