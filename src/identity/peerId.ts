/**
 * Peer ids: a peer id is the EVM address of the identity key, written as 40 lower-case hex
 * characters without `0x` on the wire.
 * Input is accepted in either case, with or without `0x`.
 */

/** A normalised peer id: 40 lower-case hex characters, no prefix. */
export type PeerId = string & { readonly __brand?: 'PeerId' };

const PEER_ID = /^(?:0x)?([0-9a-fA-F]{40})$/;

/** True when `text` is a peer id in any accepted spelling. */
export function isPeerId(text: string): boolean {
  return PEER_ID.test(text);
}

/** Normalises any accepted spelling to the wire form, or throws a message saying what is wrong. */
export function parsePeerId(text: string): PeerId {
  const match = PEER_ID.exec(text.trim());
  if (!match) {
    throw new TypeError(
      `"${text}" is not a peer id: expected 40 hex characters, with or without 0x`,
    );
  }
  return match[1]!.toLowerCase();
}

/** The peer id of an EVM address (checksummed or not). */
export function peerIdFromAddress(address: string): PeerId {
  return parsePeerId(address);
}

/** The EVM address (`0x` + 40 lower-case hex) of a peer id. */
export function addressFromPeerId(peerId: string): `0x${string}` {
  return `0x${parsePeerId(peerId)}`;
}
