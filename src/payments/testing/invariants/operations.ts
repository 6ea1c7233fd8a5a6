/**
 * The operations of the invariant suite as fast-check generates them: plain data naming actors,
 * channels and amounts by position and share, so a sequence shrinks and replays; `plan*` turn one
 * into a transaction for the model's current state.
 */
import fc from 'fast-check';
import type { Hex } from 'viem';
import type { SignatureFlaw } from './model.js';
import type { Transaction } from './world.js';

/** An amount as a share (per mille) of what is available, or an edge. */
export type AmountPick = { permille: number } | { exact: 'zero' | 'all' | 'over' };

export type DeadlinePick = 'valid' | 'edge' | 'stale';

export type Operation =
  | { kind: 'deposit'; sender: number; beneficiary: number; amount: AmountPick }
  | {
      kind: 'depositWithAuthorization';
      signer: number;
      relayer: number;
      amount: AmountPick;
      variant: 'valid' | 'replay' | 'tampered' | 'expired' | 'early' | 'toOther' | SignatureFlaw;
      forger: number;
    }
  | { kind: 'withdraw'; sender: number; to: number; amount: AmountPick }
  | { kind: 'donate'; sender: number; amount: AmountPick }
  | {
      kind: 'openChannel';
      buyer: number;
      seller: number;
      amount: AmountPick;
      deadline: DeadlinePick;
      flaw: SignatureFlaw;
      forger: number;
      /** Submitted by another seller than the one the buyer signed for. */
      wrongSeller: boolean;
      /** Resubmit an existing channel's opening reserve instead. */
      reopen: number | undefined;
    }
  | {
      kind: 'topUp';
      channel: number;
      submitter: number;
      delta: AmountPick;
      deadline: DeadlinePick;
      flaw: SignatureFlaw;
      forger: number;
      /** Resubmit a reserve the buyer signed earlier for this channel. */
      replay: number | undefined;
    }
  | { kind: 'signVoucher'; channel: number; increment: number; overLock: boolean }
  | {
      kind: 'settle';
      channel: number;
      submitter: number;
      pick: 'latest' | 'highest' | 'older' | 'inflated';
      older: number;
      flaw: SignatureFlaw;
      forger: number;
    }
  | {
      kind: 'close';
      channel: number;
      other: number | undefined;
      voucher: 'none' | 'latest' | 'highest' | 'older' | 'forged';
      older: number;
      forger: number;
    }
  | { kind: 'requestClose'; channel: number; other: number | undefined }
  | { kind: 'reclaim'; channel: number; other: number | undefined }
  | { kind: 'jump'; seconds: number }
  | { kind: 'jumpToGraceEnd'; channel: number; offset: -1 | 0 | 1 };

export type OperationKind = Operation['kind'];

/** What a planned operation sends and what the model says will happen. */
export interface Step {
  label: string;
  /** Undefined for an off-chain step (a buyer signing a voucher, time passing). */
  tx: Transaction | undefined;
  /** The revert reason the model predicts, or undefined when it must succeed. */
  expectRevert: string | undefined;
  /** The step's effects on the model (called only when it succeeded). */
  apply: () => void;
  /** Actors whose credits the step may lower: the sender of a withdraw, the buyer of a reserve it signed. */
  creditAuthorizers: number[];
  /** Value actors chose to give away in this step (a deposit for another, a withdrawal to another, a donation). */
  givenAway: Map<number, bigint>;
  /** The caller is no party to what it calls, or a signature is not the party's: it must revert and change nothing. */
  nonParty: boolean;
  /** A channel the step opens: read after it, kept in the model only when it opened. */
  newChannelId?: Hex;
}

/** The actors, by index (world.ts): buyers 0–2, sellers 3–5, relayers 6–7. */
export const BUYERS = [0, 1, 2];
export const SELLERS = [3, 4, 5];
/** Who may receive a deposit or a withdrawal (sellers' wallets hold only what they were paid). */
export const PAYEES = [0, 1, 2, 6, 7];
const ACTOR_COUNT = 8;

const anyActor = fc.nat({ max: ACTOR_COUNT - 1 });
const buyer = fc.constantFrom(...BUYERS);
const seller = fc.constantFrom(...SELLERS);
const payee = fc.constantFrom(...PAYEES);
const channel = fc.nat({ max: 1_000 });
const index = fc.nat({ max: 100 });
const flaw = fc.constantFrom<SignatureFlaw>(
  'forged',
  'crossChain',
  'crossContract',
  'malleated',
  'short',
);
/** Any signature, honest or flawed: what an attacker's operation carries. */
const anySignature = fc.oneof(fc.constant<SignatureFlaw>('none'), flaw);
const amount: fc.Arbitrary<AmountPick> = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 1, max: 1000 }).map((permille) => ({ permille })) },
  {
    weight: 2,
    arbitrary: fc.constantFrom<AmountPick>({ exact: 'zero' }, { exact: 'all' }, { exact: 'over' }),
  },
);
const anyDeadline = fc.constantFrom<DeadlinePick>('valid', 'edge', 'stale');
/** Mostly `honest`, sometimes `attack`: sequences fund, open, pay and close channels between attacks. */
const mostly = <T>(honest: fc.Arbitrary<T>, attack: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 3, arbitrary: honest }, { weight: 1, arbitrary: attack });
const sometimes = <T>(arbitrary: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });

const deposit = fc.record({
  kind: fc.constant('deposit' as const),
  sender: buyer,
  beneficiary: fc.oneof({ weight: 3, arbitrary: buyer }, { weight: 1, arbitrary: payee }),
  amount,
});
const depositWithAuthorization = fc.record({
  kind: fc.constant('depositWithAuthorization' as const),
  signer: buyer,
  relayer: anyActor,
  amount,
  variant: mostly(
    fc.constant('valid' as const),
    fc.constantFrom(
      'replay' as const,
      'tampered' as const,
      'expired' as const,
      'early' as const,
      'toOther' as const,
      'forged' as const,
      'crossChain' as const,
      'malleated' as const,
    ),
  ),
  forger: anyActor,
});
const withdraw = fc.record({
  kind: fc.constant('withdraw' as const),
  sender: mostly(buyer, anyActor),
  to: payee,
  amount,
});
const donate = fc.record({ kind: fc.constant('donate' as const), sender: buyer, amount });
const openChannel = mostly(
  fc.record({
    kind: fc.constant('openChannel' as const),
    buyer,
    seller,
    amount,
    deadline: fc.constant<DeadlinePick>('valid'),
    flaw: fc.constant<SignatureFlaw>('none'),
    forger: anyActor,
    wrongSeller: fc.constant(false),
    reopen: fc.constant(undefined),
  }),
  fc.record({
    kind: fc.constant('openChannel' as const),
    buyer,
    seller,
    amount,
    deadline: anyDeadline,
    flaw: anySignature,
    forger: anyActor,
    wrongSeller: fc.boolean(),
    reopen: sometimes(channel),
  }),
);
const topUp = fc.record({
  kind: fc.constant('topUp' as const),
  channel,
  submitter: anyActor,
  delta: amount,
  deadline: mostly(fc.constant<DeadlinePick>('valid'), anyDeadline),
  flaw: mostly(fc.constant<SignatureFlaw>('none'), flaw),
  forger: anyActor,
  replay: sometimes(index),
});
const signVoucher = fc.record({
  kind: fc.constant('signVoucher' as const),
  channel,
  increment: fc.integer({ min: 1, max: 1000 }),
  overLock: mostly(fc.constant(false), fc.constant(true)),
});
const settle = fc.record({
  kind: fc.constant('settle' as const),
  channel,
  submitter: mostly(seller, anyActor),
  pick: mostly(
    fc.constant('latest' as const),
    fc.constantFrom('highest' as const, 'older' as const, 'inflated' as const),
  ),
  older: index,
  flaw: mostly(fc.constant<SignatureFlaw>('none'), flaw),
  forger: anyActor,
});
const close = fc.record({
  kind: fc.constant('close' as const),
  channel,
  other: sometimes(anyActor),
  voucher: mostly(
    fc.constantFrom('none' as const, 'latest' as const),
    fc.constantFrom('highest' as const, 'older' as const, 'forged' as const),
  ),
  older: index,
  forger: anyActor,
});
const requestClose = fc.record({
  kind: fc.constant('requestClose' as const),
  channel,
  other: sometimes(anyActor),
});
const reclaim = fc.record({
  kind: fc.constant('reclaim' as const),
  channel,
  other: sometimes(anyActor),
});
const jump = fc.record({
  kind: fc.constant('jump' as const),
  seconds: fc.oneof(fc.integer({ min: 1, max: 600 }), fc.constantFrom(3599, 3600, 3601, 86_400)),
});
const jumpToGraceEnd = fc.record({
  kind: fc.constant('jumpToGraceEnd' as const),
  channel,
  offset: fc.constantFrom<-1 | 0 | 1>(-1, 0, 1),
});

/** One operation, weighted so sequences fund, open, pay and close channels between attacks. */
export const operationArb: fc.Arbitrary<Operation> = fc.oneof(
  { weight: 5, arbitrary: deposit },
  { weight: 3, arbitrary: depositWithAuthorization },
  { weight: 2, arbitrary: withdraw },
  { weight: 1, arbitrary: donate },
  { weight: 5, arbitrary: openChannel },
  { weight: 3, arbitrary: topUp },
  { weight: 6, arbitrary: signVoucher },
  { weight: 5, arbitrary: settle },
  { weight: 3, arbitrary: close },
  { weight: 3, arbitrary: requestClose },
  { weight: 3, arbitrary: reclaim },
  { weight: 2, arbitrary: jump },
  { weight: 3, arbitrary: jumpToGraceEnd },
);

/** Resolves an amount pick against what is available. */
export function resolveAmount(pick: AmountPick, available: bigint): bigint {
  if ('exact' in pick) {
    if (pick.exact === 'zero') return 0n;
    return pick.exact === 'all' ? available : available + 1n;
  }
  const share = (available * BigInt(pick.permille)) / 1000n;
  return share > 0n ? share : 1n;
}

/** The next transaction's block time (the model's clock plus any pending jump). */
export function nextTime(model: { now: number; pendingJump: number }): number {
  return model.now + model.pendingJump + 1;
}

/** A deadline for a reserve mined at `time`. */
export function deadlineAt(pick: DeadlinePick, time: number): bigint {
  if (pick === 'edge') return BigInt(time);
  return pick === 'stale' ? BigInt(time - 1) : BigInt(time + 600);
}

/** Some actor other than `excluded`, from a generated index. */
export function otherThan(index: number, excluded: number): number {
  return index === excluded ? (index + 1) % ACTOR_COUNT : index;
}

/** A step that changes no state but the model's (no transaction). */
export function offChain(label: string, apply: () => void): Step {
  return {
    label,
    tx: undefined,
    expectRevert: undefined,
    apply,
    creditAuthorizers: [],
    givenAway: new Map(),
    nonParty: false,
  };
}
