/**
 * The harness of the repo-check scripts' tests (test/check-layers.test.ts,
 * test/check-params.test.ts): tiny source trees written to temporary directories, and one run of
 * a script (`node scripts/<name>.mjs <root>`) on such a tree, with its exit code and output.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll } from 'vitest';
import { removeTempDir, tempDir } from '../../src/testing/index.js';

export interface ScriptRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * For one script of scripts/: `tree` writes files (path under the tree → source) and returns the
 * tree's root; `check` runs the script on a root. Trees are removed after the file's tests.
 */
export function scriptTrees(script: string, prefix: string) {
  const path = fileURLToPath(new URL(`../../scripts/${script}`, import.meta.url));
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) removeTempDir(dir);
  });
  const tree = (files: Record<string, string>): string => {
    const root = tempDir(prefix);
    dirs.push(root);
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      writeFileSync(join(root, file), text);
    }
    return root;
  };
  const check = async (root: string): Promise<ScriptRun> => {
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [path, root], {
        cwd: root,
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as ScriptRun;
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  };
  return { tree, check };
}
