/** What the channel operation planners share: picking a channel, building a call or a step. */
import { encodeFunctionData, type Hex, keccak256, stringToHex } from 'viem';
import { SvcPaymentsAbi } from '../../../contracts/index.js';
import { type Model, type ModelChannel, STATUS_OPEN } from './model.js';
import type { Step } from './operations.js';
import type { World } from './world.js';

/** An id no channel has: what operations aim at before any channel exists. */
export const NOWHERE: Hex = keccak256(stringToHex('no such channel'));

/**
 * A channel by generated index: three times in four an open one the operation can act on
 * (`useful`, when any is), else any channel, so sequences reach the paths that move money.
 */
export function pick(
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

export const hasUnsettledVoucher = (channel: ModelChannel) => channel.maxSigned > channel.settled;
export const closeRequested = (channel: ModelChannel) => channel.closeRequestedAt !== 0;

/**
 * Whether an operation on a channel goes ahead when `pick` found none: one in eight aims at an id
 * no channel has (it must revert, "channel not open"); the rest are skipped.
 */
export function aimsAtNowhere(model: Model, index: number): boolean {
  return model.channels.length > 0 || index % 8 === 0;
}

export function call(
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

export function step(
  fields: Omit<Step, 'creditAuthorizers' | 'givenAway' | 'nonParty'> & Partial<Step>,
): Step {
  return { creditAuthorizers: [], givenAway: new Map(), nonParty: false, ...fields };
}
