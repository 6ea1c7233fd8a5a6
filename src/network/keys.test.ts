import { publicKeyFromProtobuf, publicKeyToProtobuf } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey, peerIdFromPublicKey } from '@libp2p/peer-id';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { peerIdFromAddress } from '../identity/index.js';
import {
  libp2pKeyFromIdentity,
  libp2pPeerIdFromIdentity,
  peerIdFromLibp2p,
  showUncompressed,
} from './keys.js';

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

  it('shows the key uncompressed to a remote that reads the same key and PeerId from it', async () => {
    const key = libp2pKeyFromIdentity(`0x${'07'.repeat(32)}`);
    const shown = showUncompressed(key);
    const sent = publicKeyToProtobuf(shown.publicKey);
    expect(sent.byteLength).toBe(publicKeyToProtobuf(key.publicKey).byteLength + 32);
    const read = publicKeyFromProtobuf(sent);
    expect(read.equals(key.publicKey)).toBe(true);
    expect(peerIdFromPublicKey(read).equals(peerIdFromPrivateKey(key))).toBe(true);
    // The same key signs: the signature checks under the key as the remote read it.
    const message = new TextEncoder().encode('static key');
    expect(await read.verify(message, await shown.sign(message))).toBe(true);
    // The key itself is untouched.
    expect(key.publicKey.raw.byteLength).toBe(33);
  });
});
