import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { peerIdFromAddress } from '../identity/index.js';
import { libp2pPeerIdFromIdentity, peerIdFromLibp2p } from './keys.js';

describe('libp2p keys from identities', () => {
  it('derives the EVM peer id back from the libp2p PeerId for many keys', () => {
    for (let i = 1; i <= 20; i++) {
      const key = `0x${i.toString(16).padStart(2, '0').repeat(32)}` as const;
      const libp2pId = libp2pPeerIdFromIdentity(key);
      expect(libp2pId.type).toBe('secp256k1');
      const expected = peerIdFromAddress(privateKeyToAccount(key).address);
      expect(peerIdFromLibp2p(libp2pId)).toBe(expected);
      // The second answer comes from the cache and must be the same.
      expect(peerIdFromLibp2p(libp2pPeerIdFromIdentity(key))).toBe(expected);
    }
  });
});
