/** Runs one generated sequence against the chain from the funded start, checking after every step. */
import { checkStep } from './checks.js';
import { initialModel, type Model } from './model.js';
import { nextTime, type Operation, type OperationKind, type Step } from './operations.js';
import { planChannelOperation } from './planChannels.js';
import {
  planDeposit,
  planDepositWithAuthorization,
  planDonate,
  planWithdraw,
} from './planCredits.js';
import type { World } from './world.js';

/** What the suite did, for its summary line. */
export interface SuiteStats {
  sequences: number;
  /** Operations that did something: transactions plus off-chain steps (signing, time). */
  steps: number;
  transactions: number;
  byKind: Map<OperationKind, { succeeded: number; reverted: number }>;
  /** How often each revert reason was met, by operation ("settle: voucher above lock"). */
  reverts: Map<string, number>;
}

export function newStats(): SuiteStats {
  return { sequences: 0, steps: 0, transactions: 0, byKind: new Map(), reverts: new Map() };
}

function plan(
  op: Operation,
  model: Model,
  world: World,
): Promise<Step | undefined> | Step | undefined {
  switch (op.kind) {
    case 'deposit':
      return planDeposit(op, model, world);
    case 'depositWithAuthorization':
      return planDepositWithAuthorization(op, model, world);
    case 'withdraw':
      return planWithdraw(op, model, world);
    case 'donate':
      return planDonate(op, model, world);
    default:
      return planChannelOperation(op, model, world);
  }
}

/** Resets the chain, replays `operations` one by one and checks every invariant after each. */
export async function runSequence(
  world: World,
  operations: Operation[],
  stats: SuiteStats,
): Promise<void> {
  await world.reset();
  const model = initialModel(world);
  let before = await world.read([]);
  stats.sequences++;
  for (const op of operations) {
    const step = await plan(op, model, world);
    if (!step) continue;
    stats.steps++;
    const counts = stats.byKind.get(op.kind) ?? { succeeded: 0, reverted: 0 };
    stats.byKind.set(op.kind, counts);
    if (!step.tx) {
      step.apply();
      counts.succeeded++;
      continue;
    }
    const time = nextTime(model);
    const ids = model.channels.map((channel) => channel.id);
    const outcome = await world.execute(
      step.tx,
      time,
      step.newChannelId ? [...ids, step.newChannelId] : ids,
    );
    model.now = time;
    model.pendingJump = 0;
    stats.transactions++;
    if (outcome.reverted) {
      counts.reverted++;
      const key = `${op.kind}: ${outcome.reason}`;
      stats.reverts.set(key, (stats.reverts.get(key) ?? 0) + 1);
    } else counts.succeeded++;
    if (!outcome.reverted && step.expectRevert === undefined) step.apply();
    checkStep(step, outcome, before, model, world);
    // A channel that did not open is read once (to see it stayed empty), then forgotten.
    before = { ...outcome.state, channels: outcome.state.channels.slice(0, model.channels.length) };
  }
}
