/**
 * Packages a test drives that are not the product's dependencies (the coding tools of
 * test/agents, the client libraries of test/clients): pinned in that folder's lockfile and
 * installed there by scripts/install-test-packages.mjs when missing. Under CI=true (or when the
 * named variable is `required`) a failed install fails the run; otherwise the test skips, saying
 * why.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = new URL('../..', import.meta.url).pathname;

/**
 * True when `ready()` holds, installing the folder's packages first if needed; false (after
 * printing why) when they cannot be installed and nothing requires them; throws when required.
 */
export function ensurePinnedPackages(
  folder: 'test/agents' | 'test/clients',
  ready: () => boolean,
  requiredVariable: string,
): boolean {
  if (ready()) return true;
  const run = spawnSync(
    process.execPath,
    [join(ROOT, 'scripts/install-test-packages.mjs'), folder],
    { stdio: 'inherit', timeout: 300_000 },
  );
  if (run.status === 0 && ready()) return true;
  const why = `the pinned packages of ${folder} could not be installed (node scripts/install-test-packages.mjs ${folder})`;
  if (process.env.CI === 'true' || process.env[requiredVariable] === 'required') {
    throw new Error(why);
  }
  process.stderr.write(`skipped: ${why}\n`);
  return false;
}
