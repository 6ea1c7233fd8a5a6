/**
 * Test support every folder shares (never compiled into dist): polling, temporary directories,
 * the fields of a thrown SvcError.
 */
export { svcFailure } from './svcFailure.js';
export { removeTempDir, tempDir } from './tempDir.js';
export { waitFor } from './waitFor.js';
