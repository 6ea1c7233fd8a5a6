#!/usr/bin/env node
// Installs the pinned packages a test drives from its own folder (`npm ci` in test/agents: the
// coding tools; in test/clients: the client libraries), unless the installed copy already
// matches the lockfile. They never become dependencies of the product. Prints the time it took.
//   node scripts/install-test-packages.mjs test/agents|test/clients
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const folder = process.argv[2];
if (folder !== 'test/agents' && folder !== 'test/clients') {
  process.stderr.write('usage: install-test-packages.mjs test/agents|test/clients\n');
  process.exit(2);
}
const dir = new URL(`../${folder}/`, import.meta.url).pathname;
const lockHash = createHash('sha256')
  .update(readFileSync(join(dir, 'package-lock.json')))
  .digest('hex');
const stamp = join(dir, 'node_modules', '.svc-lock-sha256');
if (existsSync(stamp) && readFileSync(stamp, 'utf8') === lockHash) {
  process.stdout.write(`${folder}: up to date\n`);
  process.exit(0);
}
const started = Date.now();
execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
  cwd: dir,
  stdio: 'inherit',
});
writeFileSync(stamp, lockHash);
process.stdout.write(`${folder}: installed in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
