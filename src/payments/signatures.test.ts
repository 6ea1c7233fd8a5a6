import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { hasContractForm } from '../identity/index.js';
import {
  isReserveSignedByBuyer,
  isVoucherSignedBy,
  type PaymentsDomain,
  type ReserveMessage,
  signReserve,
  signVoucher,
  voucherSigner,
} from './signatures.js';
import { mirroredSignature } from './testing.js';

const domain: PaymentsDomain = {
  chainId: 31337,
  paymentsAddress: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
};
const buyer = privateKeyToAccount(generatePrivateKey());
const voucher = { channelId: `0x${'ab'.repeat(32)}` as const, cumulativeAmount: 9_000n };

function withV(signature: `0x${string}`, v: number): `0x${string}` {
  return `0x${signature.slice(2, 130)}${v.toString(16).padStart(2, '0')}`;
}

describe('signatures the payments contract accepts', () => {
  it('refuses a high-s voucher that viem still recovers to the buyer', async () => {
    const signature = await signVoucher(buyer, domain, voucher);
    expect(await isVoucherSignedBy(domain, voucher, signature, buyer.address)).toBe(true);
    const high = mirroredSignature(signature);
    // The mirrored signature recovers to the buyer (what was checked before) ...
    expect(await voucherSigner(domain, voucher, high)).toBe(buyer.address);
    // ... but the contract's `_recover` refuses its `s`, so the seller must too.
    expect(hasContractForm(high)).toBe(false);
    expect(await isVoucherSignedBy(domain, voucher, high, buyer.address)).toBe(false);
  });

  it('accepts v as 0/1 or 27/28 and refuses other v, other lengths and a zero s', async () => {
    const signature = await signVoucher(buyer, domain, voucher);
    const v = Number.parseInt(signature.slice(130), 16);
    expect(await isVoucherSignedBy(domain, voucher, withV(signature, v - 27), buyer.address)).toBe(
      true,
    );
    expect(await isVoucherSignedBy(domain, voucher, withV(signature, v + 2), buyer.address)).toBe(
      false,
    );
    expect(hasContractForm(signature.slice(0, 130) as `0x${string}`)).toBe(false);
    expect(hasContractForm(`${signature}00`)).toBe(false);
    expect(hasContractForm(`0x${signature.slice(2, 66)}${'0'.repeat(64)}1b`)).toBe(false);
    expect(
      await isVoucherSignedBy(
        domain,
        voucher,
        signature,
        privateKeyToAccount(generatePrivateKey()).address,
      ),
    ).toBe(false);
  });

  it('refuses a high-s reserve authorisation', async () => {
    const reserve: ReserveMessage = {
      channelId: voucher.channelId,
      buyer: buyer.address,
      seller: privateKeyToAccount(generatePrivateKey()).address,
      maxAmount: 1_000_000n,
      deadline: 2_000_000_000n,
    };
    const signature = await signReserve(buyer, domain, reserve);
    expect(await isReserveSignedByBuyer(domain, reserve, signature)).toBe(true);
    expect(await isReserveSignedByBuyer(domain, reserve, mirroredSignature(signature))).toBe(false);
  });
});
