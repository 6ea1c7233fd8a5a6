/** `src/cli/index.ts` run directly (as the gateway test harness does), with lazily loaded groups. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDir, tempDir } from '../src/testing/index.js';

const ENTRY = fileURLToPath(new URL('../src/cli/index.ts', import.meta.url));
const dataDir = tempDir('svc-cli-entry-');
afterAll(() => removeTempDir(dataDir));

describe('the CLI entry module run directly', () => {
  it('runs a command group whose modules import the entry module (no import deadlock)', async () => {
    // The gateway group imports CliError from src/cli/index.ts while that module is the entry.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', ENTRY, '--data-dir', dataDir, '--json', 'gateway', 'key', 'list'],
      { env: { ...process.env, NODE_NO_WARNINGS: '1' } },
    );
    expect(JSON.parse(stdout)).toEqual([]);
  });
});
