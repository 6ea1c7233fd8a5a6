/**
 * EIP-712 Reserve and Voucher messages of the SvcPayments contract (domain "SvcPayments" v1,
 * bound to the chain id and the contract address). Hashing is done by hand over fixed-size
 * fields so signing a voucher on the request path costs one keccak pair and one secp256k1 sign.
 */
import {
  type Address,
  concatHex,
  encodeAbiParameters,
  type Hex,
  hashTypedData,
  hexToBytes,
  keccak256,
  numberToHex,
  padHex,
  recoverAddress,
  stringToHex,
} from 'viem';
import type { LocalAccount } from 'viem/accounts';
import { isSignedBy, keccakHex } from '../identity/index.js';

/** Where signatures are valid: one chain, one payments contract. */
export interface PaymentsDomain {
  chainId: number;
  paymentsAddress: Address;
}

export interface ReserveMessage {
  channelId: Hex;
  buyer: Address;
  seller: Address;
  maxAmount: bigint;
  /** Unix seconds after which the contract refuses the authorisation. */
  deadline: bigint;
}

export interface VoucherFields {
  channelId: Hex;
  cumulativeAmount: bigint;
}

export const RESERVE_TYPES = {
  Reserve: [
    { name: 'channelId', type: 'bytes32' },
    { name: 'buyer', type: 'address' },
    { name: 'seller', type: 'address' },
    { name: 'maxAmount', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
} as const;

export const VOUCHER_TYPES = {
  Voucher: [
    { name: 'channelId', type: 'bytes32' },
    { name: 'cumulativeAmount', type: 'uint256' },
  ],
} as const;

const VOUCHER_TYPEHASH = keccak256(
  stringToHex('Voucher(bytes32 channelId,uint256 cumulativeAmount)'),
);
const domainSeparators = new Map<string, Hex>();

/** The viem typed-data domain of the payments contract. */
export function typedDataDomain(domain: PaymentsDomain) {
  return {
    name: 'SvcPayments',
    version: '1',
    chainId: domain.chainId,
    verifyingContract: domain.paymentsAddress,
  } as const;
}

/** The EIP-712 domain separator buyers sign under: what the contract's DOMAIN_SEPARATOR() must equal. */
export function paymentsDomainSeparator(domain: PaymentsDomain): Hex {
  const key = `${domain.chainId}:${domain.paymentsAddress.toLowerCase()}`;
  let separator = domainSeparators.get(key);
  if (!separator) {
    separator = keccak256(
      encodeAbiParameters(
        [
          { type: 'bytes32' },
          { type: 'bytes32' },
          { type: 'bytes32' },
          { type: 'uint256' },
          { type: 'address' },
        ],
        [
          keccak256(
            stringToHex(
              'EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)',
            ),
          ),
          keccak256(stringToHex('SvcPayments')),
          keccak256(stringToHex('1')),
          BigInt(domain.chainId),
          domain.paymentsAddress,
        ],
      ),
    );
    domainSeparators.set(key, separator);
  }
  return separator;
}

/** The id of channel (buyer, seller, salt), as the contract computes it. */
export function channelIdOf(buyer: Address, seller: Address, salt: Hex): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: 'address' }, { type: 'address' }, { type: 'bytes32' }],
      [buyer, seller, salt],
    ),
  );
}

/** EIP-712 digest of a voucher (equal to viem's hashTypedData, computed faster). */
export function voucherDigest(domain: PaymentsDomain, voucher: VoucherFields): Hex {
  const structHash = keccakHex(
    hexToBytes(
      concatHex([
        VOUCHER_TYPEHASH,
        voucher.channelId,
        padHex(numberToHex(voucher.cumulativeAmount), { size: 32 }),
      ]),
    ),
  );
  return keccakHex(hexToBytes(concatHex(['0x1901', paymentsDomainSeparator(domain), structHash])));
}

/** EIP-712 digest of a reserve authorisation. */
export function reserveDigest(domain: PaymentsDomain, reserve: ReserveMessage): Hex {
  return hashTypedData({
    domain: typedDataDomain(domain),
    types: RESERVE_TYPES,
    primaryType: 'Reserve',
    message: reserve,
  });
}

/** Buyer signs a cumulative voucher. */
export async function signVoucher(
  account: LocalAccount,
  domain: PaymentsDomain,
  voucher: VoucherFields,
): Promise<Hex> {
  if (!account.sign) throw new Error('this account cannot sign raw digests');
  return account.sign({ hash: voucherDigest(domain, voucher) });
}

/** Buyer signs a reserve authorisation (open or top-up a channel's lock). */
export async function signReserve(
  account: LocalAccount,
  domain: PaymentsDomain,
  reserve: ReserveMessage,
): Promise<Hex> {
  if (!account.sign) throw new Error('this account cannot sign raw digests');
  return account.sign({ hash: reserveDigest(domain, reserve) });
}

/** Address that signed a voucher (throws on a malformed signature). */
export async function voucherSigner(
  domain: PaymentsDomain,
  voucher: VoucherFields,
  signature: Hex,
): Promise<Address> {
  return recoverAddress({ hash: voucherDigest(domain, voucher), signature });
}

/** Address that signed a reserve authorisation. */
export async function reserveSigner(
  domain: PaymentsDomain,
  reserve: ReserveMessage,
  signature: Hex,
): Promise<Address> {
  return recoverAddress({ hash: reserveDigest(domain, reserve), signature });
}

/**
 * True when `signature` is `expected`'s signature of the voucher in a form the contract accepts;
 * false for anything else (src/identity/digestSignatures.ts).
 */
export async function isVoucherSignedBy(
  domain: PaymentsDomain,
  voucher: VoucherFields,
  signature: Hex,
  expected: Address,
): Promise<boolean> {
  return isSignedBy(voucherDigest(domain, voucher), signature, expected);
}

/** True when `signature` is `reserve.buyer`'s signature of the reserve, in the contract's form. */
export async function isReserveSignedByBuyer(
  domain: PaymentsDomain,
  reserve: ReserveMessage,
  signature: Hex,
): Promise<boolean> {
  return isSignedBy(reserveDigest(domain, reserve), signature, reserve.buyer);
}
