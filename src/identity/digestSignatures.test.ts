import { randomBytes } from 'node:crypto';
import { type Hex, recoverAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { HALF_ORDER, hasContractForm, isSignedBy } from './digestSignatures.js';
import { mirroredSignature } from './testing.js';

const digest = (): Hex => `0x${randomBytes(32).toString('hex')}`;

/** What the contract accepts, the slow way: its form, then viem's recovery of the signer. */
async function reference(hash: Hex, signature: Hex, expected: string): Promise<boolean> {
  if (!hasContractForm(signature)) return false;
  try {
    return (await recoverAddress({ hash, signature })).toLowerCase() === expected.toLowerCase();
  } catch {
    return false;
  }
}

function withV(signature: Hex, v: number): Hex {
  return `0x${signature.slice(2, 130)}${v.toString(16).padStart(2, '0')}`;
}

/** `signature` with its r (part 0) or s (part 1) plus `delta`. */
function shifted(signature: Hex, part: 0 | 1, delta: bigint): Hex {
  const start = 2 + part * 64;
  const value = (BigInt(`0x${signature.slice(start, start + 64)}`) + delta).toString(16);
  return `0x${signature.slice(2, start)}${value.padStart(64, '0')}${signature.slice(start + 64)}` as Hex;
}

describe('checking a signature as the contract does (decision 161)', () => {
  it('accepts and refuses exactly what recovery plus the contract form does, on every path', async () => {
    const signers = [0, 1, 2].map(() => privateKeyToAccount(generatePrivateKey()));
    let compared = 0;
    for (let round = 0; round < 6; round++) {
      for (const [index, signer] of signers.entries()) {
        const hash = digest();
        const signature = await signer.sign({ hash });
        const v = Number.parseInt(signature.slice(130), 16);
        const other = signers[(index + 1) % signers.length]!;
        const cases: Array<[Hex, Hex, string]> = [
          [hash, signature, signer.address],
          [hash, withV(signature, v - 27), signer.address],
          [hash, withV(signature, v === 27 ? 28 : 27), signer.address],
          [hash, mirroredSignature(signature), signer.address],
          [hash, shifted(signature, 0, 1n), signer.address],
          [hash, shifted(signature, 1, 1n), signer.address],
          [digest(), signature, signer.address],
          [hash, signature, other.address],
          [hash, await other.sign({ hash }), signer.address],
        ];
        for (const [h, s, expected] of cases) {
          expect(isSignedBy(h, s, expected as Hex)).toBe(await reference(h, s, expected));
          compared++;
        }
        // The valid signature again, after the tampered ones: still accepted.
        expect(isSignedBy(hash, signature, signer.address)).toBe(true);
      }
    }
    expect(compared).toBe(6 * 3 * 9);
  });

  it('keeps no key from a refused first signature, and refuses forgeries once a key is known', async () => {
    const buyer = privateKeyToAccount(generatePrivateKey());
    const forger = privateKeyToAccount(generatePrivateKey());
    const hash = digest();
    expect(isSignedBy(hash, await forger.sign({ hash }), buyer.address)).toBe(false);
    expect(isSignedBy(hash, await buyer.sign({ hash }), buyer.address)).toBe(true);
    for (let i = 0; i < 3; i++) {
      const next = digest();
      expect(isSignedBy(next, await forger.sign({ hash: next }), buyer.address)).toBe(false);
      expect(isSignedBy(next, await buyer.sign({ hash: next }), buyer.address)).toBe(true);
    }
  });

  it('refuses r or s out of range and an s just above half the order', async () => {
    const buyer = privateKeyToAccount(generatePrivateKey());
    const hash = digest();
    const signature = await buyer.sign({ hash });
    expect(isSignedBy(hash, signature, buyer.address)).toBe(true);
    const r = signature.slice(2, 66);
    const halfPlusOne = (HALF_ORDER + 1n).toString(16).padStart(64, '0');
    expect(isSignedBy(hash, `0x${r}${halfPlusOne}1b`, buyer.address)).toBe(false);
    expect(isSignedBy(hash, `0x${'0'.repeat(64)}${signature.slice(66)}`, buyer.address)).toBe(
      false,
    );
    expect(isSignedBy(hash, `0x${'f'.repeat(64)}${signature.slice(66)}`, buyer.address)).toBe(
      false,
    );
  });
});
