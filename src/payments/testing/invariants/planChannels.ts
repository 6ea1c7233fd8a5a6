/** Planning the channel operations: open, top up, sign, settle, close, request close, reclaim, time. */
import { encodeFunctionData, type Hex, keccak256, stringToHex } from 'viem';
import { SvcPaymentsAbi } from '../../../contracts/index.js';
import { channelIdOf } from '../../index.js';
import {
  finishChannel,
  type Model,
  type ModelChannel,
  paymentsSignatureRevert,
  type SignatureFlaw,
  STATUS_OPEN,
  settleChannel,
  settleRevert,
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
import { reserveSignature, saltOf, voucherSignature } from './signing.js';
import { GRACE_SECONDS, type World } from './world.js';

/** An id no channel has: what operations aim at before any channel exists. */
const NOWHERE: Hex = keccak256(stringToHex('no such channel'));

/**
 * A channel by generated index: three times in four an open one the operation can act on
 * (`useful`, when any is), else any channel, so sequences reach the paths that move money.
 */
function pick(
  model: Model,
  index: number,
  useful: (channel: ModelChannel) => boolean = () => true,
): ModelChannel | undefined {
  const open = model.channels.filter((channel) => channel.status === STATUS_OPEN);
  const preferred = open.filter(useful);
  const from =
    index % 4 === 0
      ? model.channels
      : preferred.length > 0
        ? preferred
        : open.length > 0
          ? open
          : model.channels;
  return from.length === 0 ? undefined : from[Math.floor(index / 4) % from.length];
}

const hasUnsettledVoucher = (channel: ModelChannel) => channel.maxSigned > channel.settled;
const closeRequested = (channel: ModelChannel) => channel.closeRequestedAt !== 0;

/**
 * Whether an operation on a channel goes ahead when `pick` found none: one in eight aims at an id
 * no channel has (it must revert, "channel not open"); the rest are skipped.
 */
function aimsAtNowhere(model: Model, index: number): boolean {
  return model.channels.length > 0 || index % 8 === 0;
}

function call(
  world: World,
  from: number,
  functionName: 'openChannel' | 'topUp' | 'settle' | 'close' | 'requestClose' | 'reclaim',
  args: readonly unknown[],
): Step['tx'] {
  return {
    from: world.actors[from]!.address,
    to: world.payments,
    data: encodeFunctionData({ abi: SvcPaymentsAbi, functionName, args } as Parameters<
      typeof encodeFunctionData
    >[0]),
  };
}

function step(
  fields: Omit<Step, 'creditAuthorizers' | 'givenAway' | 'nonParty'> & Partial<Step>,
): Step {
  return { creditAuthorizers: [], givenAway: new Map(), nonParty: false, ...fields };
}

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
async function planSettle(
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
async function planClose(
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
function planRequestClose(
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
function planReclaim(
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
function planJump(
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
