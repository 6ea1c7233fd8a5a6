/**
 * How the benches run svc's processes. By default from the compiled package, as a user runs an
 * installed svc: `npm run build`, then `bin/svc.js` beside a `dist/` and no `src/`, so the binary
 * picks the compiled code (bin/svc.js). `BENCH_SVC_SOURCES=1` runs the TypeScript sources
 * through tsx instead, for CPU profiles that name source files (tsx adds a `__name` call to every
 * closure it compiles, ~2 % of a seller's busy time: docs/decisions/205-where-the-seller-cpu-goes.md).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CLI_SOURCE = join(ROOT, 'src', 'cli', 'index.ts');

/** True when `BENCH_SVC_SOURCES=1` asks for the sources through tsx. */
export const fromSources = process.env.BENCH_SVC_SOURCES === '1';

let builtOnce = false;

/**
 * An "installed" layout under `root`: `pkg/bin/svc.js` beside `pkg/dist` (a link to this
 * checkout's freshly built `dist/`). Builds once per bench process; returns the binary's path.
 */
export function installedEntry(root: string): string {
  if (!builtOnce) {
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
    builtOnce = true;
  }
  const pkg = join(root, 'pkg');
  const entry = join(pkg, 'bin', 'svc.js');
  if (existsSync(entry)) return entry;
  mkdirSync(join(pkg, 'bin'), { recursive: true });
  copyFileSync(join(ROOT, 'bin', 'svc.js'), entry);
  symlinkSync(join(ROOT, 'dist'), join(pkg, 'dist'));
  return entry;
}

/** The node arguments that run svc's CLI: the installed layout under `root`, or the sources. */
export function svcCli(root: string): string[] {
  return fromSources ? ['--import', 'tsx', CLI_SOURCE] : [installedEntry(root)];
}

/**
 * Where a bench script run in a child process (bench/floorNode.ts) loads svc's modules from:
 * the built `dist/` (after `installedEntry`), or the sources.
 */
export function svcModules(root: string): string {
  if (fromSources) return join(ROOT, 'src');
  installedEntry(root);
  return join(ROOT, 'dist');
}
