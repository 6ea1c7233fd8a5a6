/** Identities: wallets the buyer pays from and sellers sign with; peer ids are their EVM addresses. */

export { DEFAULT_IDENTITY } from './defaultName.js';
export { hasContractForm, isSignedBy } from './digestSignatures.js';
export { signDigest } from './digestSigner.js';
export {
  type IdentityListing,
  type IdentityRecord,
  IdentityStore,
  type KeySource,
  type LoadedIdentity,
  parseReference,
  validateIdentityName,
} from './IdentityStore.js';
export { keccak, keccakHex, keccakInto } from './keccak.js';
export {
  addressFromPeerId,
  isPeerId,
  type PeerId,
  parsePeerId,
  peerIdFromAddress,
} from './peerId.js';
export { PresignedSigner } from './presignedSigner.js';
export { addressOf, newPrivateKey, parsePrivateKey } from './privateKey.js';
