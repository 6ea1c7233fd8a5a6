import { randomBytes } from 'node:crypto';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { accountOf } from './digestSigner.js';

describe('the raw-digest signer (decision 161)', () => {
  it("signs exactly the bytes viem's signer does, and keeps the account's other methods", async () => {
    for (let i = 0; i < 50; i++) {
      const privateKey = generatePrivateKey();
      const hash = `0x${randomBytes(32).toString('hex')}` as Hex;
      const fast = accountOf(privateKey);
      const viem = privateKeyToAccount(privateKey);
      expect(await fast.sign({ hash })).toBe(await viem.sign({ hash }));
      expect(fast.address).toBe(viem.address);
    }
    const privateKey = generatePrivateKey();
    expect(await accountOf(privateKey).signMessage({ message: 'hi' })).toBe(
      await privateKeyToAccount(privateKey).signMessage({ message: 'hi' }),
    );
  });
});
