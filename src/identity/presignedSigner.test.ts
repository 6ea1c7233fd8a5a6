import { randomBytes } from 'node:crypto';
import { type Hex, recoverAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { HALF_ORDER, hasContractForm, isSignedBy } from './digestSignatures.js';
import { signDigest } from './digestSigner.js';
import { PresignedSigner } from './presignedSigner.js';

const hex = (bytes: Uint8Array): Hex => `0x${Buffer.from(bytes).toString('hex')}`;

function newSigner(size?: number) {
  const privateKey = generatePrivateKey();
  const key = Buffer.from(privateKey.slice(2), 'hex');
  return {
    signer: new PresignedSigner(key, size),
    key,
    address: privateKeyToAccount(privateKey).address,
  };
}

describe('signatures with presigned nonces (decision 195)', () => {
  it('signs digests that isSignedBy and viem recover to the key, low s, v 27 or 28', async () => {
    for (let round = 0; round < 4; round++) {
      const { signer, address } = newSigner(32);
      await signer.filled();
      for (let i = 0; i < 32; i++) {
        const digest = randomBytes(32);
        const signature = signer.sign(digest);
        expect(hasContractForm(signature)).toBe(true);
        expect(BigInt(`0x${signature.slice(66, 130)}`) <= HALF_ORDER).toBe(true);
        expect(['1b', '1c']).toContain(signature.slice(130));
        expect(isSignedBy(hex(digest), signature, address)).toBe(true);
        expect(await recoverAddress({ hash: hex(digest), signature })).toBe(address);
      }
      // Every one of those came from the pool, none from libsecp256k1.
      expect(signer.counts).toEqual({ pooled: 32, direct: 0 });
    }
  });

  it('uses each nonce once: 1,000 signatures, 1,000 distinct r, none of them RFC 6979', async () => {
    const { signer, key, address } = newSigner(40);
    const seen = new Set<string>();
    const digest = randomBytes(32);
    const deterministic = signDigest(digest, key);
    for (let batch = 0; batch < 25; batch++) {
      await signer.filled();
      for (let i = 0; i < 40; i++) {
        // The same digest every time: only the nonce can make r differ.
        const signature = signer.sign(digest);
        expect(isSignedBy(hex(digest), signature, address)).toBe(true);
        seen.add(signature.slice(2, 66));
      }
    }
    expect(signer.counts).toEqual({ pooled: 1000, direct: 0 });
    expect(seen.size).toBe(1000);
    expect(seen.has(deterministic.slice(2, 66))).toBe(false);
  });

  it('signs as signDigest does (RFC 6979) while the pool is empty, and fills it after', async () => {
    const { signer, key, address } = newSigner(8);
    expect(signer.ready).toBe(0);
    const digest = randomBytes(32);
    expect(signer.sign(digest)).toBe(signDigest(digest, key));
    expect(signer.counts).toEqual({ pooled: 0, direct: 1 });
    await signer.filled();
    expect(signer.ready).toBe(8);
    const pooled = signer.sign(digest);
    expect(pooled).not.toBe(signDigest(digest, key));
    expect(isSignedBy(hex(digest), pooled, address)).toBe(true);
    expect(signer.ready).toBe(7);
  });

  it('a signature does not verify for another digest, nor for another key', async () => {
    const { signer, address } = newSigner(16);
    const other = newSigner(1);
    await signer.filled();
    for (let i = 0; i < 16; i++) {
      const digest = randomBytes(32);
      const signature = signer.sign(digest);
      const wrong = Buffer.from(digest);
      wrong[i] = (wrong[i]! + 1) % 256;
      expect(isSignedBy(hex(wrong), signature, address)).toBe(false);
      expect(await recoverAddress({ hash: hex(wrong), signature })).not.toBe(address);
      expect(isSignedBy(hex(digest), signature, other.address)).toBe(false);
    }
  });

  it('a nonce taken by a signature that throws is not used again', async () => {
    const { signer, address } = newSigner(2);
    await signer.filled();
    // Not a digest: the BigInt of its bytes throws after the nonce left the pool.
    const notBytes = { buffer: 1 } as unknown as Uint8Array;
    expect(() => signer.sign(notBytes)).toThrow();
    expect(signer.ready).toBe(1);
    const digest = randomBytes(32);
    const signature = signer.sign(digest);
    expect(isSignedBy(hex(digest), signature, address)).toBe(true);
    expect(signer.ready).toBe(0);
  });
});
