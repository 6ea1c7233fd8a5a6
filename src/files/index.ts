/** Filesystem helpers below everything else: owner-only directories and what a path is. */
export { ensureDir, NotADirectoryError, pathKind } from './ensureDir.js';
