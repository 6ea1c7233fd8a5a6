import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../testing/index.js';
import { FileChanges } from './fileChanges.js';

const dirs: string[] = [];
const watched: FileChanges[] = [];
afterEach(() => {
  for (const changes of watched.splice(0)) changes.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function setup(createDir: boolean) {
  const root = mkdtempSync(join(tmpdir(), 'svc-changes-'));
  dirs.push(root);
  const path = join(root, 'sub', 'state.json');
  const changes = new FileChanges(path, createDir);
  watched.push(changes);
  /** Waits until the watched mtime is `expected` (the watch's event arrives asynchronously). */
  const seen = (expected: number | undefined) =>
    waitFor(() => changes.mtimeMs() === expected, 5_000, `mtime ${expected}`);
  return { root, path, changes, seen };
}

describe('file changes (hot reload)', () => {
  it('sees a file created, replaced, edited in place and deleted', async () => {
    const { path, changes, seen } = setup(true);
    expect(changes.mtimeMs()).toBeUndefined();
    // The directory is made so that the file's creation can be watched.
    expect(existsSync(join(path, '..'))).toBe(true);
    writeFileSync(path, '{}');
    utimesSync(path, 1_000, 1_000);
    await seen(1_000_000);
    writeFileSync(`${path}.tmp`, '{"a":1}');
    utimesSync(`${path}.tmp`, 2_000, 2_000);
    renameSync(`${path}.tmp`, path);
    await seen(2_000_000);
    // The watch follows the new file: an edit in place after the replacement is seen too.
    writeFileSync(path, '{"a":2}');
    utimesSync(path, 3_000, 3_000);
    await seen(3_000_000);
    rmSync(path);
    await seen(undefined);
    writeFileSync(path, '{}');
    utimesSync(path, 4_000, 4_000);
    await seen(4_000_000);
  });

  it('without its directory (not created) stats on every call', () => {
    const { path, changes } = setup(false);
    expect(changes.mtimeMs()).toBeUndefined();
    expect(existsSync(join(path, '..'))).toBe(false);
    // No watch could be set: the next call's stat sees the file at once.
    mkdirSync(join(path, '..'));
    writeFileSync(path, '{}');
    utimesSync(path, 5_000, 5_000);
    expect(changes.mtimeMs()).toBe(5_000_000);
  });
});
