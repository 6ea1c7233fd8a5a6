/** Parsing and generating secp256k1 private keys (hex), via viem. */
import { type Hex, isHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

/** Normalises a hex private key ("0x" optional, surrounding whitespace ignored) or throws. */
export function parsePrivateKey(text: string, source: string): Hex {
  const trimmed = text.trim();
  const hex = (
    trimmed.startsWith('0x') || trimmed.startsWith('0X') ? `0x${trimmed.slice(2)}` : `0x${trimmed}`
  ) as Hex;
  if (!isHex(hex) || hex.length !== 66) {
    throw new TypeError(
      `${source} does not hold a private key: expected 64 hex characters, with or without 0x`,
    );
  }
  const lower = hex.toLowerCase() as Hex;
  try {
    privateKeyToAccount(lower);
  } catch {
    throw new TypeError(
      `${source} holds 64 hex characters that are not a valid secp256k1 private key`,
    );
  }
  return lower;
}

/** A fresh random private key. */
export function newPrivateKey(): Hex {
  return generatePrivateKey();
}

/** The EVM address of a private key. */
export function addressOf(privateKey: Hex): `0x${string}` {
  return privateKeyToAccount(privateKey).address;
}
