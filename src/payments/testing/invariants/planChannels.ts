/** Planning the channel operations: open, top up and sign here, the ways a channel ends in planClosing.ts. */
import type { Hex } from 'viem';
import { channelIdOf } from '../../index.js';
import {
  type Model,
  type ModelChannel,
  paymentsSignatureRevert,
  type SignatureFlaw,
  STATUS_OPEN,
} from './model.js';
import {
  BUYERS,
  deadlineAt,
  nextTime,
  type Operation,
  offChain,
  otherThan,
  resolveAmount,
  SELLERS,
  type Step,
} from './operations.js';
import { planClose, planJump, planReclaim, planRequestClose, planSettle } from './planClosing.js';
import { aimsAtNowhere, call, NOWHERE, pick, step } from './planShared.js';
import { reserveSignature, saltOf, voucherSignature } from './signing.js';
import type { World } from './world.js';

/** A seller opens a channel on a buyer's reserve (or replays one, or submits another seller's). */
async function planOpen(
  op: Extract<Operation, { kind: 'openChannel' }>,
  model: Model,
  world: World,
): Promise<Step> {
  const time = nextTime(model);
  const existing = op.reopen === undefined ? undefined : pick(model, op.reopen);
  if (existing) {
    const reserve = existing.reserves[0]!;
    return step({
      label: `reopen ${existing.id.slice(0, 10)} by ${world.actors[existing.seller]!.name}`,
      tx: call(world, existing.seller, 'openChannel', [
        world.actors[existing.buyer]!.address,
        existing.salt,
        reserve.maxAmount,
        reserve.deadline,
        reserve.signature,
      ]),
      expectRevert: 'channel exists',
      apply: () => undefined,
      nonParty: true,
    });
  }
  // Three times in four a buyer with credits, when the one generated has none.
  const funded = BUYERS.filter((b) => model.credits[b]! > 0n);
  const buyerIndex =
    model.credits[op.buyer] === 0n && funded.length > 0 && op.forger % 4 !== 0
      ? funded[op.buyer % funded.length]!
      : op.buyer;
  const buyer = world.actors[buyerIndex]!;
  const seller = world.actors[op.seller]!;
  const submitter = op.wrongSeller
    ? SELLERS[(SELLERS.indexOf(op.seller) + 1) % SELLERS.length]!
    : op.seller;
  const salt = saltOf(model.salts++);
  const id = channelIdOf(buyer.address, seller.address, salt);
  const amount = resolveAmount(op.amount, model.credits[buyerIndex]!);
  const deadline = deadlineAt(op.deadline, time);
  const forger = world.actors[otherThan(op.forger, buyerIndex)]!.account;
  const reserve = {
    channelId: id,
    buyer: buyer.address,
    seller: seller.address,
    maxAmount: amount,
    deadline,
  };
  const signature = await reserveSignature(world, buyer.account, forger, reserve, op.flaw);
  // The contract derives the id from the submitter: another seller's id was never signed for.
  const signatureRevert = paymentsSignatureRevert(
    op.wrongSeller && op.flaw === 'none' ? 'forged' : op.flaw,
    'reserve',
  );
  const expectRevert =
    amount === 0n
      ? 'amount is zero'
      : BigInt(time) > deadline
        ? 'reserve expired'
        : (signatureRevert ??
          (model.credits[buyerIndex]! < amount ? 'insufficient credits' : undefined));
  const channel: ModelChannel = {
    id,
    salt,
    buyer: buyerIndex,
    seller: op.seller,
    locked: amount,
    settled: 0n,
    closeRequestedAt: 0,
    status: STATUS_OPEN,
    maxSigned: 0n,
    vouchers: [],
    reserves: op.flaw === 'none' ? [{ maxAmount: amount, deadline, signature }] : [],
  };
  const honest = op.flaw === 'none' && !op.wrongSeller;
  return step({
    label: `open ${amount} ${buyer.name}->${seller.name} by ${world.actors[submitter]!.name} (${op.flaw}, deadline ${op.deadline})`,
    tx: call(world, submitter, 'openChannel', [buyer.address, salt, amount, deadline, signature]),
    expectRevert,
    apply: () => {
      model.credits[buyerIndex] = model.credits[buyerIndex]! - amount;
      model.channels.push(channel);
    },
    creditAuthorizers: honest ? [buyerIndex] : [],
    nonParty: !honest,
    newChannelId: channelIdOf(buyer.address, world.actors[submitter]!.address, salt),
  });
}

/** Anyone submits a buyer's reserve raising a channel's lock (fresh, flawed or replayed). */
async function planTopUp(
  op: Extract<Operation, { kind: 'topUp' }>,
  model: Model,
  world: World,
): Promise<Step | undefined> {
  const time = nextTime(model);
  if (!aimsAtNowhere(model, op.channel)) return undefined;
  const channel = pick(model, op.channel);
  const buyerIndex = channel?.buyer ?? 0;
  const credits = model.credits[buyerIndex]!;
  const replayed =
    op.replay === undefined || !channel?.reserves.length
      ? undefined
      : channel.reserves[op.replay % channel.reserves.length];
  let maxAmount: bigint;
  let deadline: bigint;
  let signature: Hex;
  let flaw: SignatureFlaw = op.flaw;
  if (replayed) {
    ({ maxAmount, deadline, signature } = replayed);
    flaw = 'none';
  } else {
    maxAmount = (channel?.locked ?? 0n) + resolveAmount(op.delta, credits);
    deadline = deadlineAt(op.deadline, time);
    const forger = world.actors[otherThan(op.forger, buyerIndex)]!.account;
    const buyer = world.actors[buyerIndex]!;
    const seller = world.actors[channel?.seller ?? SELLERS[0]!]!;
    const reserve = {
      channelId: channel?.id ?? NOWHERE,
      buyer: buyer.address,
      seller: seller.address,
      maxAmount,
      deadline,
    };
    signature = await reserveSignature(world, buyer.account, forger, reserve, flaw);
    if (channel && flaw === 'none') channel.reserves.push({ maxAmount, deadline, signature });
  }
  const delta = maxAmount - (channel?.locked ?? 0n);
  const expectRevert =
    !channel || channel.status !== STATUS_OPEN
      ? 'channel not open'
      : maxAmount <= channel.locked
        ? 'lock not raised'
        : BigInt(time) > deadline
          ? 'reserve expired'
          : (paymentsSignatureRevert(flaw, 'reserve') ??
            (credits < delta ? 'insufficient credits' : undefined));
  return step({
    label: `topUp ${channel?.id.slice(0, 10) ?? 'nowhere'} to ${maxAmount} by ${world.actors[op.submitter]!.name} (${replayed ? 'replay' : flaw})`,
    tx: call(world, op.submitter, 'topUp', [
      channel?.id ?? NOWHERE,
      maxAmount,
      deadline,
      signature,
    ]),
    expectRevert,
    apply: () => {
      if (!channel) return;
      model.credits[channel.buyer] = credits - delta;
      channel.locked = maxAmount;
      channel.closeRequestedAt = 0;
    },
    creditAuthorizers: flaw === 'none' && channel ? [channel.buyer] : [],
    nonParty: flaw !== 'none' || !channel,
  });
}

/** The buyer signs the next cumulative voucher (within the lock, or past it). No transaction. */
async function planSignVoucher(
  op: Extract<Operation, { kind: 'signVoucher' }>,
  model: Model,
  world: World,
): Promise<Step | undefined> {
  const channel = pick(model, op.channel);
  if (!channel) return undefined;
  const room = channel.locked - channel.maxSigned;
  const increment =
    op.overLock || room <= 0n
      ? room + 1n + BigInt(op.increment)
      : 1n + ((room - 1n) * BigInt(op.increment)) / 1000n;
  const amount = channel.maxSigned + (increment > 0n ? increment : 1n);
  const signature = await voucherSignature(
    world,
    world.actors[channel.buyer]!.account,
    world.actors[0]!.account,
    { channelId: channel.id, cumulativeAmount: amount },
    'none',
  );
  return offChain(
    `${world.actors[channel.buyer]!.name} signs ${amount} for ${channel.id.slice(0, 10)}`,
    () => {
      channel.vouchers.push({ amount, signature });
      channel.maxSigned = amount;
    },
  );
}

/** Plans any channel or time operation. */
export function planChannelOperation(
  op: Exclude<Operation, { kind: 'deposit' | 'depositWithAuthorization' | 'withdraw' | 'donate' }>,
  model: Model,
  world: World,
): Promise<Step | undefined> | Step | undefined {
  switch (op.kind) {
    case 'openChannel':
      return planOpen(op, model, world);
    case 'topUp':
      return planTopUp(op, model, world);
    case 'signVoucher':
      return planSignVoucher(op, model, world);
    case 'settle':
      return planSettle(op, model, world);
    case 'close':
      return planClose(op, model, world);
    case 'requestClose':
      return planRequestClose(op, model, world);
    case 'reclaim':
      return planReclaim(op, model, world);
    default:
      return planJump(op, model);
  }
}
