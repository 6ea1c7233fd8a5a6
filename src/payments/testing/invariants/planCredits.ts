/** Planning the credit operations: deposit, depositWithAuthorization, withdraw, and a plain transfer in. */
import { encodeFunctionData } from 'viem';
import { SvcPaymentsAbi, TestUSDCAbi } from '../../../contracts/index.js';
import {
  type Model,
  type ModelAuthorization,
  type SignatureFlaw,
  tokenSignatureRevert,
} from './model.js';
import { nextTime, type Operation, otherThan, resolveAmount, type Step } from './operations.js';
import { authorizationSignature, counterNonce, splitSignature } from './signing.js';
import type { World } from './world.js';

const NOT_ENOUGH_USDC = 'ERC20: transfer amount exceeds balance';

function step(
  fields: Omit<Step, 'creditAuthorizers' | 'givenAway' | 'nonParty'> & Partial<Step>,
): Step {
  return { creditAuthorizers: [], givenAway: new Map(), nonParty: false, ...fields };
}

/** `deposit(beneficiary, amount)` from a buyer's wallet (approved once at set-up). */
export function planDeposit(
  op: Extract<Operation, { kind: 'deposit' }>,
  model: Model,
  world: World,
): Step {
  const amount = resolveAmount(op.amount, model.wallets[op.sender]!);
  const expectRevert =
    amount === 0n
      ? 'amount is zero'
      : model.wallets[op.sender]! < amount
        ? NOT_ENOUGH_USDC
        : undefined;
  const sender = world.actors[op.sender]!;
  const beneficiary = world.actors[op.beneficiary]!;
  return step({
    label: `deposit ${amount} by ${sender.name} for ${beneficiary.name}`,
    tx: {
      from: sender.address,
      to: world.payments,
      data: encodeFunctionData({
        abi: SvcPaymentsAbi,
        functionName: 'deposit',
        args: [beneficiary.address, amount],
      }),
    },
    expectRevert,
    apply: () => {
      model.wallets[op.sender] = model.wallets[op.sender]! - amount;
      model.credits[op.beneficiary] = model.credits[op.beneficiary]! + amount;
      model.held += amount;
    },
    givenAway: op.beneficiary === op.sender ? new Map() : new Map([[op.sender, amount]]),
  });
}

/** The token's and the contract's checks of an authorization submitted at `time`, in their order. */
function authorizationRevert(
  model: Model,
  auth: ModelAuthorization,
  submittedValue: bigint,
  flaw: SignatureFlaw | 'mismatch',
  time: number,
): string | undefined {
  if (submittedValue === 0n) return 'amount is zero';
  if (BigInt(time) <= auth.validAfter) return 'FiatTokenV2: authorization is not yet valid';
  if (BigInt(time) >= auth.validBefore) return 'FiatTokenV2: authorization is expired';
  if (
    model.authorizations.some((a) => a.used && a.signer === auth.signer && a.nonce === auth.nonce)
  ) {
    return 'FiatTokenV2: authorization is used or canceled';
  }
  const signatureRevert =
    flaw === 'mismatch' ? 'FiatTokenV2: invalid signature' : tokenSignatureRevert(flaw);
  if (signatureRevert) return signatureRevert;
  if (model.wallets[auth.signer]! < submittedValue) return NOT_ENOUGH_USDC;
  return undefined;
}

/**
 * A relayer submits a buyer's EIP-3009 authorization: fresh and valid, replayed, for more than
 * was signed, out of its time window, signed for another payee, by someone else, for another
 * chain, or mirrored.
 */
export async function planDepositWithAuthorization(
  op: Extract<Operation, { kind: 'depositWithAuthorization' }>,
  model: Model,
  world: World,
): Promise<Step> {
  const time = nextTime(model);
  const relayer = world.actors[op.relayer]!;
  const previous = model.authorizations[op.forger % Math.max(1, model.authorizations.length)];
  const replay = op.variant === 'replay' && previous !== undefined;
  let auth: ModelAuthorization;
  let flaw: SignatureFlaw | 'mismatch' = 'none';
  let submittedValue: bigint;
  if (replay) {
    auth = previous;
    submittedValue = auth.value;
  } else {
    const owner = world.actors[op.signer]!;
    const value = resolveAmount(op.amount, model.wallets[op.signer]!);
    const validAfter = BigInt(op.variant === 'early' ? time : time - 1);
    const validBefore = BigInt(op.variant === 'expired' ? time : time + 3600);
    const nonce = counterNonce(model.authorizations.length);
    const signatureFlaw: SignatureFlaw =
      op.variant === 'forged' || op.variant === 'crossChain' || op.variant === 'malleated'
        ? op.variant
        : 'none';
    const forger = world.actors[otherThan(op.forger, op.signer)]!.account;
    const to = op.variant === 'toOther' ? relayer.address : world.payments;
    const signature = await authorizationSignature(
      world,
      owner.account,
      forger,
      { to, value, validAfter, validBefore, nonce },
      signatureFlaw,
    );
    auth = { signer: op.signer, value, validAfter, validBefore, nonce, signature, used: false };
    flaw = op.variant === 'toOther' || op.variant === 'tampered' ? 'mismatch' : signatureFlaw;
    submittedValue = op.variant === 'tampered' ? value + 1n : value;
    // What the owner really signed (to the contract) may be replayed later: keep it.
    if (signatureFlaw === 'none' && to === world.payments) model.authorizations.push(auth);
  }
  const { v, r, s } = splitSignature(auth.signature);
  const signer = world.actors[auth.signer]!;
  return step({
    label: `depositWithAuthorization ${submittedValue} of ${signer.name} by ${relayer.name} (${replay ? (auth.used ? 'replay' : 'late submission') : op.variant})`,
    tx: {
      from: relayer.address,
      to: world.payments,
      data: encodeFunctionData({
        abi: SvcPaymentsAbi,
        functionName: 'depositWithAuthorization',
        args: [
          signer.address,
          submittedValue,
          auth.validAfter,
          auth.validBefore,
          auth.nonce,
          v,
          r,
          s,
        ],
      }),
    },
    expectRevert: authorizationRevert(model, auth, submittedValue, flaw, time),
    apply: () => {
      auth.used = true;
      model.wallets[auth.signer] = model.wallets[auth.signer]! - submittedValue;
      model.credits[auth.signer] = model.credits[auth.signer]! + submittedValue;
      model.held += submittedValue;
    },
    // Submitting an authorization the owner signed, whoever submits it, is the owner's deposit;
    // only a second use of one is a replay that must revert.
    nonParty: (replay && auth.used) || flaw !== 'none',
  });
}

/** `withdraw(amount, to)`: only the sender's own credits. */
export function planWithdraw(
  op: Extract<Operation, { kind: 'withdraw' }>,
  model: Model,
  world: World,
): Step {
  const credits = model.credits[op.sender]!;
  const amount = resolveAmount(op.amount, credits);
  const sender = world.actors[op.sender]!;
  const to = world.actors[op.to]!;
  return step({
    label: `withdraw ${amount} by ${sender.name} to ${to.name}`,
    tx: {
      from: sender.address,
      to: world.payments,
      data: encodeFunctionData({
        abi: SvcPaymentsAbi,
        functionName: 'withdraw',
        args: [amount, to.address],
      }),
    },
    expectRevert:
      amount === 0n ? 'amount is zero' : credits < amount ? 'insufficient credits' : undefined,
    apply: () => {
      model.credits[op.sender] = credits - amount;
      model.wallets[op.to] = model.wallets[op.to]! + amount;
      model.held -= amount;
    },
    creditAuthorizers: [op.sender],
    givenAway: op.to === op.sender ? new Map() : new Map([[op.sender, amount]]),
    nonParty: credits === 0n && amount > 0n,
  });
}

/** USDC sent to the contract with a plain transfer: held, owed to nobody. */
export function planDonate(
  op: Extract<Operation, { kind: 'donate' }>,
  model: Model,
  world: World,
): Step {
  const amount = resolveAmount(op.amount, model.wallets[op.sender]!);
  const sender = world.actors[op.sender]!;
  return step({
    label: `transfer ${amount} straight to the contract by ${sender.name}`,
    tx: {
      from: sender.address,
      to: world.usdc,
      data: encodeFunctionData({
        abi: TestUSDCAbi,
        functionName: 'transfer',
        args: [world.payments, amount],
      }),
    },
    expectRevert: model.wallets[op.sender]! < amount ? NOT_ENOUGH_USDC : undefined,
    apply: () => {
      model.wallets[op.sender] = model.wallets[op.sender]! - amount;
      model.held += amount;
      model.donated += amount;
    },
    givenAway: new Map([[op.sender, amount]]),
  });
}
