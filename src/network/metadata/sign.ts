/**
 * Signing and verifying peer records: the signature covers the RFC 8785 canonical JSON of the
 * record without `signature` (EIP-191 personal message over those raw bytes). Verification
 * recomputes the canonical bytes from what was received, so any changed field (a price, the
 * load) breaks it; the recovered signer must be the record's own peer id.
 */
import canonicalize from 'canonicalize';
import { recoverMessageAddress } from 'viem';
import type { LocalAccount } from 'viem/accounts';
import { type PeerId, peerIdFromAddress } from '../../identity/index.js';
import type { PeerMetadata, UnsignedPeerMetadata } from '../types.js';
import {
  MAX_METADATA_AGE_MS,
  MAX_METADATA_BYTES,
  MAX_METADATA_FUTURE_MS,
  peerMetadataSchema,
} from './schema.js';
import { shareRecordParts } from './shareParts.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Why a record was refused (also the key of the rejection counters). */
export type MetadataRejection =
  | 'too_large'
  | 'invalid_json'
  | 'unknown_version'
  | 'invalid_record'
  | 'stale'
  | 'future'
  | 'bad_signature'
  | 'wrong_peer';

export type MetadataVerdict =
  | { ok: true; metadata: PeerMetadata }
  | { ok: false; reason: MetadataRejection; message: string };

/** The exact bytes that are signed: canonical JSON of everything but `signature`. */
export function canonicalMetadataBytes(record: UnsignedPeerMetadata | PeerMetadata): Uint8Array {
  const { signature: _ignored, ...unsigned } = record as PeerMetadata;
  const text = canonicalize(unsigned);
  if (text === undefined) throw new TypeError('metadata cannot be canonicalised');
  return encoder.encode(text);
}

/** Signs a record with the identity account; the record's peerId must be that account's. */
export async function signMetadata(
  unsigned: UnsignedPeerMetadata,
  account: LocalAccount,
): Promise<PeerMetadata> {
  if (peerIdFromAddress(account.address) !== unsigned.peerId) {
    throw new TypeError(`metadata peerId ${unsigned.peerId} is not the signer ${account.address}`);
  }
  const signature = await account.signMessage({
    message: { raw: canonicalMetadataBytes(unsigned) },
  });
  return { ...unsigned, signature };
}

/** Serialised form sent over `/svc/meta/1` (canonical, so re-signing is reproducible). */
export function encodeMetadata(metadata: PeerMetadata): Uint8Array {
  return encoder.encode(canonicalize(metadata) ?? '');
}

export interface VerifyOptions {
  /** Current time (unix ms); injected by tests. */
  now?: number;
  /** The peer id the record must belong to (e.g. the authenticated libp2p remote). */
  expectedPeerId?: PeerId;
}

function reject(reason: MetadataRejection, message: string): MetadataVerdict {
  return { ok: false, reason, message };
}

/** Parses, validates and verifies a received record (bytes or an already-parsed value). */
export async function verifyMetadata(
  input: Uint8Array | unknown,
  options: VerifyOptions = {},
): Promise<MetadataVerdict> {
  let value: unknown = input;
  if (input instanceof Uint8Array) {
    if (input.byteLength > MAX_METADATA_BYTES) {
      return reject(
        'too_large',
        `record of ${input.byteLength} bytes exceeds ${MAX_METADATA_BYTES}`,
      );
    }
    try {
      value = JSON.parse(decoder.decode(input));
    } catch {
      return reject('invalid_json', 'record is not UTF-8 JSON');
    }
  } else {
    const size = encoder.encode(JSON.stringify(input) ?? '').byteLength;
    if (size > MAX_METADATA_BYTES)
      return reject('too_large', `record exceeds ${MAX_METADATA_BYTES} bytes`);
  }
  if (typeof value === 'object' && value !== null && 'version' in value) {
    if ((value as { version: unknown }).version !== 1) {
      return reject(
        'unknown_version',
        `unknown metadata version ${String((value as { version: unknown }).version)}`,
      );
    }
  }
  const parsed = peerMetadataSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return reject(
      'invalid_record',
      `${issue?.path.join('.') || 'record'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  const metadata = parsed.data;
  const now = options.now ?? Date.now();
  if (now - metadata.timestamp > MAX_METADATA_AGE_MS) {
    return reject('stale', `record signed ${Math.round((now - metadata.timestamp) / 1000)} s ago`);
  }
  if (metadata.timestamp - now > MAX_METADATA_FUTURE_MS) {
    return reject('future', 'record is dated in the future');
  }
  if (options.expectedPeerId !== undefined && metadata.peerId !== options.expectedPeerId) {
    return reject(
      'wrong_peer',
      `record claims ${metadata.peerId}, peer is ${options.expectedPeerId}`,
    );
  }
  let signer: string;
  try {
    // Verify the bytes as received (the raw value), not the zod output.
    signer = await recoverMessageAddress({
      message: { raw: canonicalMetadataBytes(value as PeerMetadata) },
      signature: metadata.signature,
    });
  } catch {
    return reject('bad_signature', 'signature does not recover');
  }
  if (peerIdFromAddress(signer) !== metadata.peerId) {
    return reject(
      'bad_signature',
      `signed by ${peerIdFromAddress(signer)}, not ${metadata.peerId}`,
    );
  }
  // The received value itself, not zod's copy: the strict schema has no transforms or defaults, so
  // both hold the same fields, and the value is what the signature covers. The copy builds its
  // 20-key records one key at a time (dictionary-mode objects): about 3 MiB more per 1,000 cached
  // sellers of 20 services, plus the garbage of a second copy of every record at load
  // (docs/decisions/155-buyer-memory-with-many-peers.md).
  const verified = value as PeerMetadata;
  // Parsed here from bytes, so nobody else holds its parts.
  if (input instanceof Uint8Array) shareRecordParts(verified);
  return { ok: true, metadata: verified };
}
