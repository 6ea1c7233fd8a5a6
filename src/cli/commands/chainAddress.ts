/** Address arguments of the `svc chain` commands. */
import { type Address, getAddress } from 'viem';
import { SvcError } from '../../errors/index.js';
import { parsePeerId } from '../../identity/index.js';

/** Accepts a 0x address or a peer id (40 hex, with or without 0x). */
export function parseAddressArgument(text: string): Address {
  try {
    return `0x${parsePeerId(text)}` as Address;
  } catch {
    throw new SvcError('invalid_argument', {
      message: `"${text}" is not an address: expected 0x followed by 40 hex characters`,
    });
  }
}

/** A checksummed contract address from an argument or option; undefined stays undefined. */
export function parseContractAddress(text: string): Address;
export function parseContractAddress(text: string | undefined): Address | undefined;
export function parseContractAddress(text: string | undefined): Address | undefined {
  return text === undefined ? undefined : getAddress(parseAddressArgument(text));
}
