/** Planning how channels end: settle, close, request close, reclaim, and time jumps to a grace end. */
import type { Hex } from 'viem';
import {
  finishChannel,
  type Model,
  type ModelChannel,
  type SignatureFlaw,
  STATUS_OPEN,
  settleChannel,
  settleRevert,
} from './model.js';
import { nextTime, type Operation, offChain, otherThan, SELLERS, type Step } from './operations.js';
import {
  aimsAtNowhere,
  call,
  closeRequested,
  hasUnsettledVoucher,
  NOWHERE,
  pick,
  step,
} from './planShared.js';
import { voucherSignature } from './signing.js';
import { GRACE_SECONDS, type World } from './world.js';

/**
 * A voucher the buyer signed: the highest within the lock (what an honest seller submits), the
 * highest of all (perhaps above the lock), an older one, or an inflated amount under the
 * highest's signature.
 */
async function chooseVoucher(
  world: World,
  channel: ModelChannel,
  {
    choice,
    older,
    flaw,
    forger,
  }: {
    choice: 'latest' | 'highest' | 'older' | 'inflated' | 'forged';
    older: number;
    flaw: SignatureFlaw;
    forger: number;
  },
): Promise<{ amount: bigint; signature: Hex; flaw: SignatureFlaw } | undefined> {
  const highest = channel.vouchers.at(-1);
  if (!highest) return undefined;
  const withinLock = channel.vouchers.filter((v) => v.amount <= channel.locked).at(-1) ?? highest;
  const base =
    choice === 'older'
      ? channel.vouchers[older % channel.vouchers.length]!
      : choice === 'latest'
        ? withinLock
        : highest;
  if (choice === 'inflated')
    return { amount: base.amount + 1n + BigInt(older), signature: base.signature, flaw: 'forged' };
  const effective: SignatureFlaw = choice === 'forged' ? 'forged' : flaw;
  if (effective === 'none') return { ...base, flaw: 'none' };
  const buyer = world.actors[channel.buyer]!.account;
  const signature = await voucherSignature(
    world,
    buyer,
    world.actors[otherThan(forger, channel.buyer)]!.account,
    { channelId: channel.id, cumulativeAmount: base.amount },
    effective,
  );
  return { amount: base.amount, signature, flaw: effective };
}

/** Anyone submits a voucher: the seller is paid the part not yet paid, never more than signed. */
export async function planSettle(
  op: Extract<Operation, { kind: 'settle' }>,
  model: Model,
  world: World,
): Promise<Step | undefined> {
  const channel = pick(model, op.channel, hasUnsettledVoucher);
  if (!channel) return undefined;
  const voucher = await chooseVoucher(world, channel, {
    choice: op.pick,
    older: op.older,
    flaw: op.flaw,
    forger: op.forger,
  });
  if (!voucher) return undefined;
  return step({
    label: `settle ${voucher.amount} on ${channel.id.slice(0, 10)} by ${world.actors[op.submitter]!.name} (${op.pick}, ${voucher.flaw})`,
    tx: call(world, op.submitter, 'settle', [channel.id, voucher.amount, voucher.signature]),
    expectRevert: settleRevert(channel, voucher.amount, voucher.flaw),
    apply: () => settleChannel(model, channel, voucher.amount),
    nonParty: voucher.flaw !== 'none',
  });
}

/** The seller (or someone else) closes, with a final voucher or none. */
export async function planClose(
  op: Extract<Operation, { kind: 'close' }>,
  model: Model,
  world: World,
): Promise<Step | undefined> {
  if (!aimsAtNowhere(model, op.channel)) return undefined;
  const channel = pick(model, op.channel, hasUnsettledVoucher);
  const caller =
    op.other === undefined
      ? (channel?.seller ?? SELLERS[0]!)
      : otherThan(op.other, channel?.seller ?? -1);
  const voucher =
    channel && op.voucher !== 'none'
      ? await chooseVoucher(world, channel, {
          choice: op.voucher,
          older: op.older,
          flaw: 'none',
          forger: op.forger,
        })
      : undefined;
  const amount = voucher?.amount ?? 0n;
  const signature: Hex = voucher?.signature ?? '0x';
  const settles = channel !== undefined && voucher !== undefined && amount > channel.settled;
  const expectRevert =
    !channel || channel.status !== STATUS_OPEN
      ? 'channel not open'
      : caller !== channel.seller
        ? 'only the seller'
        : settles
          ? settleRevert(channel, amount, voucher.flaw)
          : undefined;
  return step({
    label: `close ${channel?.id.slice(0, 10) ?? 'nowhere'} by ${world.actors[caller]!.name} with ${voucher ? `${amount} (${op.voucher})` : 'no voucher'}`,
    tx: call(world, caller, 'close', [channel?.id ?? NOWHERE, amount, signature]),
    expectRevert,
    apply: () => {
      if (!channel) return;
      if (settles) settleChannel(model, channel, amount);
      finishChannel(model, channel);
    },
    // A flawed voucher at or below what was settled is ignored by close, which then succeeds.
    nonParty: !channel || caller !== channel.seller || (settles && voucher.flaw !== 'none'),
  });
}

/** The buyer (or someone else) asks to close. */
export function planRequestClose(
  op: Extract<Operation, { kind: 'requestClose' }>,
  model: Model,
  world: World,
): Step | undefined {
  const time = nextTime(model);
  if (!aimsAtNowhere(model, op.channel)) return undefined;
  const channel = pick(model, op.channel);
  const caller =
    op.other === undefined ? (channel?.buyer ?? 0) : otherThan(op.other, channel?.buyer ?? -1);
  return step({
    label: `requestClose ${channel?.id.slice(0, 10) ?? 'nowhere'} by ${world.actors[caller]!.name}`,
    tx: call(world, caller, 'requestClose', [channel?.id ?? NOWHERE]),
    expectRevert:
      !channel || channel.status !== STATUS_OPEN
        ? 'channel not open'
        : caller !== channel.buyer
          ? 'only the buyer'
          : undefined,
    apply: () => {
      if (channel && channel.closeRequestedAt === 0) channel.closeRequestedAt = time;
    },
    nonParty: !channel || caller !== channel.buyer,
  });
}

/** The buyer (or someone else) reclaims the unspent lock, before or after the grace period. */
export function planReclaim(
  op: Extract<Operation, { kind: 'reclaim' }>,
  model: Model,
  world: World,
): Step | undefined {
  const time = nextTime(model);
  if (!aimsAtNowhere(model, op.channel)) return undefined;
  const channel = pick(model, op.channel, closeRequested);
  const caller =
    op.other === undefined ? (channel?.buyer ?? 0) : otherThan(op.other, channel?.buyer ?? -1);
  const expectRevert =
    !channel || channel.status !== STATUS_OPEN
      ? 'channel not open'
      : caller !== channel.buyer
        ? 'only the buyer'
        : channel.closeRequestedAt === 0
          ? 'close not requested'
          : time < channel.closeRequestedAt + GRACE_SECONDS
            ? 'grace period not over'
            : undefined;
  return step({
    label: `reclaim ${channel?.id.slice(0, 10) ?? 'nowhere'} by ${world.actors[caller]!.name}`,
    tx: call(world, caller, 'reclaim', [channel?.id ?? NOWHERE]),
    expectRevert,
    apply: () => {
      if (channel) finishChannel(model, channel);
    },
    nonParty: !channel || caller !== channel.buyer,
  });
}

/** Time passes: a number of seconds, or to one second around a channel's end of grace. */
export function planJump(
  op: Extract<Operation, { kind: 'jump' | 'jumpToGraceEnd' }>,
  model: Model,
): Step | undefined {
  if (op.kind === 'jump') {
    return offChain(`${op.seconds} s pass`, () => {
      model.pendingJump += op.seconds;
    });
  }
  const waiting = model.channels.filter(
    (c) => c.status === STATUS_OPEN && c.closeRequestedAt !== 0,
  );
  const channel = waiting[op.channel % Math.max(1, waiting.length)];
  if (!channel) return undefined;
  const target = channel.closeRequestedAt + GRACE_SECONDS + op.offset;
  if (target <= model.now) return undefined;
  return offChain(
    `time to grace end ${op.offset >= 0 ? '+' : ''}${op.offset} of ${channel.id.slice(0, 10)}`,
    () => {
      model.pendingJump = target - model.now - 1;
    },
  );
}
