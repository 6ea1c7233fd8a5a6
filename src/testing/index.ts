/** Test support every folder shares (never compiled into dist): polling and temporary directories. */
export { removeTempDir, tempDir } from './tempDir.js';
export { waitFor } from './waitFor.js';
