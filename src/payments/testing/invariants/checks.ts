/**
 * What must hold after every step, read from the chain: the contract's USDC equals what it owes;
 * a buyer loses no more than it signed; a seller receives no more than the highest voucher; nobody
 * moves another party's credits; a call by a non-party reverts and changes nothing. And the chain
 * agrees with the model, down to the revert reason.
 */
import { type Model, STATUS_NONE, STATUS_OPEN } from './model.js';
import type { Step } from './operations.js';
import type { ChainState, Outcome, World } from './world.js';

/** A broken invariant: the message says which, at which step, with the figures. */
export class InvariantViolation extends Error {
  override name = 'InvariantViolation';
}

function fail(step: Step, message: string): never {
  throw new InvariantViolation(`${message} (after: ${step.label})`);
}

/** The outcome the model predicted, reason included. */
function checkPrediction(step: Step, outcome: Outcome): void {
  if (step.expectRevert === undefined && outcome.reverted) {
    fail(step, `the model expected success but the chain reverted with "${outcome.reason}"`);
  }
  if (step.expectRevert !== undefined && !outcome.reverted) {
    fail(step, `the model expected a revert ("${step.expectRevert}") but the chain accepted it`);
  }
  if (step.expectRevert !== undefined && outcome.reason !== step.expectRevert) {
    fail(step, `reverted with "${outcome.reason}", the model expected "${step.expectRevert}"`);
  }
  if (step.nonParty && !outcome.reverted)
    fail(step, "a call by a non-party (or with a signature not the party's) succeeded");
}

/** A reverted transaction changes nothing the suite reads. */
function checkUnchanged(step: Step, before: ChainState, after: ChainState): void {
  const same =
    before.held === after.held &&
    before.wallets.every((value, i) => value === after.wallets[i]) &&
    before.credits.every((value, i) => value === after.credits[i]) &&
    before.channels.every((channel, i) => {
      const now = after.channels[i]!;
      return (
        channel.locked === now.locked &&
        channel.settled === now.settled &&
        channel.status === now.status &&
        channel.closeRequestedAt === now.closeRequestedAt
      );
    }) &&
    after.channels.slice(before.channels.length).every((channel) => channel.status === STATUS_NONE);
  if (!same) fail(step, 'a reverted transaction changed balances, credits or channels');
}

/** Sum of (locked - settled) over a state's open channels, optionally of one buyer only. */
function unspentLocks(state: ChainState, buyer?: string): bigint {
  return state.channels
    .filter(
      (c) => c.status === STATUS_OPEN && (buyer === undefined || c.buyer.toLowerCase() === buyer),
    )
    .reduce((sum, c) => sum + (c.locked - c.settled), 0n);
}

function settledOf(state: ChainState, buyer: string): bigint {
  return state.channels
    .filter((c) => c.buyer.toLowerCase() === buyer)
    .reduce((sum, c) => sum + c.settled, 0n);
}

/** The contract's USDC equals credits plus unspent locks (plus what was sent to it outside a deposit). */
function checkSolvency(step: Step, after: ChainState, model: Model): void {
  const owed = after.credits.reduce((sum, value) => sum + value, 0n) + unspentLocks(after);
  if (after.held !== owed + model.donated) {
    fail(
      step,
      `the contract holds ${after.held} but owes ${owed} (+ ${model.donated} sent outside deposits)`,
    );
  }
}

/** Every balance, credit and channel field is what the model says. */
function checkModel(step: Step, after: ChainState, model: Model, world: World): void {
  for (const actor of world.actors) {
    if (after.wallets[actor.index] !== model.wallets[actor.index]) {
      fail(
        step,
        `${actor.name}'s wallet holds ${after.wallets[actor.index]}, the model says ${model.wallets[actor.index]}`,
      );
    }
    if (after.credits[actor.index] !== model.credits[actor.index]) {
      fail(
        step,
        `${actor.name} has ${after.credits[actor.index]} credits, the model says ${model.credits[actor.index]}`,
      );
    }
  }
  if (after.held !== model.held)
    fail(step, `the contract holds ${after.held}, the model says ${model.held}`);
  model.channels.forEach((channel, i) => {
    const onChain = after.channels[i]!;
    const fields: Array<[string, unknown, unknown]> = [
      ['buyer', onChain.buyer.toLowerCase(), world.actors[channel.buyer]!.address.toLowerCase()],
      ['seller', onChain.seller.toLowerCase(), world.actors[channel.seller]!.address.toLowerCase()],
      ['locked', onChain.locked, channel.locked],
      ['settled', onChain.settled, channel.settled],
      ['closeRequestedAt', onChain.closeRequestedAt, channel.closeRequestedAt],
      ['status', onChain.status, channel.status],
    ];
    for (const [name, chainValue, modelValue] of fields) {
      if (chainValue !== modelValue)
        fail(
          step,
          `channel ${channel.id.slice(0, 10)} ${name} is ${chainValue}, the model says ${modelValue}`,
        );
    }
  });
}

/** No channel paid more than its buyer signed; each seller's wallet is exactly what its channels settled. */
function checkSigned(step: Step, after: ChainState, model: Model, world: World): void {
  model.channels.forEach((channel, i) => {
    const settled = after.channels[i]!.settled;
    if (settled > channel.maxSigned) {
      fail(
        step,
        `channel ${channel.id.slice(0, 10)} paid ${settled}, its buyer signed at most ${channel.maxSigned}`,
      );
    }
  });
  for (const actor of world.actors.filter((a) => a.role === 'seller')) {
    const address = actor.address.toLowerCase();
    const earned = after.channels
      .filter((c) => c.seller.toLowerCase() === address)
      .reduce((sum, c) => sum + c.settled, 0n);
    if (after.wallets[actor.index] !== earned) {
      fail(
        step,
        `${actor.name} holds ${after.wallets[actor.index]}, its channels settled ${earned}`,
      );
    }
  }
}

/**
 * Nobody's credits fall unless that party withdrew or signed the reserve; nobody's value
 * (wallet + credits + own unspent locks) falls by more than its channels settled and what it
 * chose to give away in this step.
 */
function checkNobodyElsesMoney(
  step: Step,
  before: ChainState,
  after: ChainState,
  world: World,
): void {
  for (const actor of world.actors) {
    const i = actor.index;
    if (after.credits[i]! < before.credits[i]! && !step.creditAuthorizers.includes(i)) {
      fail(
        step,
        `${actor.name}'s credits fell from ${before.credits[i]} to ${after.credits[i]} without its signature`,
      );
    }
    const address = actor.address.toLowerCase();
    const value = (state: ChainState) =>
      state.wallets[i]! + state.credits[i]! + unspentLocks(state, address);
    const loss = value(before) - value(after);
    const allowed =
      settledOf(after, address) - settledOf(before, address) + (step.givenAway.get(i) ?? 0n);
    if (loss > allowed) {
      fail(
        step,
        `${actor.name} lost ${loss}, more than its vouchers paid and what it gave away (${allowed})`,
      );
    }
  }
}

/** Runs every check of one executed step. */
export function checkStep(
  step: Step,
  outcome: Outcome,
  before: ChainState,
  model: Model,
  world: World,
): void {
  const after = outcome.state;
  checkPrediction(step, outcome);
  if (outcome.reverted) checkUnchanged(step, before, after);
  checkSolvency(step, after, model);
  checkSigned(step, after, model, world);
  checkNobodyElsesMoney(step, before, after, world);
  checkModel(step, after, model, world);
}
