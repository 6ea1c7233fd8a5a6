/**
 * Test support every folder shares (never compiled into dist): polling, temporary directories,
 * the fields of a thrown SvcError, answers sent in pieces.
 */
export { jsonInPieces, poolTo } from './jsonInPieces.js';
export { svcFailure } from './svcFailure.js';
export { removeTempDir, tempDir } from './tempDir.js';
export { waitFor } from './waitFor.js';
