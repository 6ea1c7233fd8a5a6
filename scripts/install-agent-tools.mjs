#!/usr/bin/env node
// Installs the pinned coding tools that test/agents.test.ts drives (`npm ci` in test/agents),
// unless the installed copy already matches the lockfile. Prints the time the install took.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = new URL('../test/agents/', import.meta.url).pathname;
const lockHash = createHash('sha256')
  .update(readFileSync(join(dir, 'package-lock.json')))
  .digest('hex');
const stamp = join(dir, 'node_modules', '.svc-lock-sha256');
if (existsSync(stamp) && readFileSync(stamp, 'utf8') === lockHash) {
  process.stdout.write('agent tools: up to date\n');
  process.exit(0);
}
const started = Date.now();
execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
  cwd: dir,
  stdio: 'inherit',
});
writeFileSync(stamp, lockHash);
process.stdout.write(`agent tools: installed in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
