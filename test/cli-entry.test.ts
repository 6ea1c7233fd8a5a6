/** `src/cli/index.ts` run directly (as the gateway test harness does), with lazily loaded groups. */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const ENTRY = fileURLToPath(new URL('../src/cli/index.ts', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'svc-cli-entry-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

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
