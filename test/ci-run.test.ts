/**
 * `.ci/run` sets CI=true itself (docs/guide/development.md): every npm step it runs sees it, so the
 * coding-tool tests fail instead of skipping when their install fails, whatever the runner sets.
 * A stand-in `npm` first on PATH records each call and the CI it saw; nothing is installed or run.
 */
import { execFile } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDir, tempDir } from '../src/testing/index.js';

const CI_RUN = fileURLToPath(new URL('../.ci/run', import.meta.url));
const bin = tempDir('svc-ci-run-');
afterAll(() => removeTempDir(bin));

describe('.ci/run', () => {
  it('runs every npm step, npm test included, with CI=true when the runner did not set it', async () => {
    const calls = join(bin, 'calls.txt');
    writeFileSync(calls, '');
    writeFileSync(join(bin, 'npm'), `#!/bin/sh\necho "$* CI=\${CI:-unset}" >> "${calls}"\n`);
    chmodSync(join(bin, 'npm'), 0o755);
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` };
    delete env.CI;
    await promisify(execFile)('bash', [CI_RUN], { env });
    const lines = readFileSync(calls, 'utf8').trim().split('\n');
    expect(lines).toContain('test CI=true');
    expect(lines.every((line) => line.endsWith(' CI=true'))).toBe(true);
  });
});
