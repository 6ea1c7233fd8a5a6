/**
 * Hostile receipts, for tests: issuers a seller can be started with (`startSeller`'s `receipts`)
 * to sign its answers badly. Everything else about such a seller is honest, so what a test sees
 * is the buyer's answer to the receipt alone.
 */
import type { Hex } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { type ReceiptIssuer, receiptIssuer, responseHash } from '../../network/index.js';

export type HostileReceipts = 'another-key' | 'altered-response' | 'none';

/**
 * - `another-key`: the receipt names the seller but is signed with a key that is not its own;
 * - `altered-response`: signed with the seller's key over the answer it hashed, while the bytes
 *   it sent were changed after (the hash is of other bytes than those the buyer received);
 * - `none`: the seller's signer fails, so its answers carry no receipt at all.
 */
export function hostileReceipts(kind: HostileReceipts, sellerKey: Hex): ReceiptIssuer {
  if (kind === 'another-key') return receiptIssuer(generatePrivateKey());
  if (kind === 'none') {
    return () => {
      throw new Error('this seller signs no receipts');
    };
  }
  const honest = receiptIssuer(sellerKey);
  const hashed = new TextEncoder().encode('the answer as it was before the seller changed it');
  return (fields) => honest({ ...fields, responseHash: responseHash(200, hashed) });
}
