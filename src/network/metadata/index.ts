/** Signed peer records: schema, canonical signing, verification. */
export {
  MAX_METADATA_AGE_MS,
  MAX_METADATA_BYTES,
  MAX_METADATA_FUTURE_MS,
  MAX_PROVIDERS,
  MAX_SERVICES,
  peerMetadataSchema,
} from './schema.js';
export { shareRecordParts } from './shareParts.js';
export {
  canonicalMetadataBytes,
  encodeMetadata,
  type MetadataRejection,
  type MetadataVerdict,
  signMetadata,
  type VerifyOptions,
  verifyMetadata,
} from './sign.js';
