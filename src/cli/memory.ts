/**
 * V8 heap policy of the long-running buyer (decision 098). Two GC heuristics that V8 reads at run
 * time (not only at start-up, unlike `--max-semi-space-size`), set by `svc buyer start` and
 * `svc gateway start` (which runs the buyer in its process) before they load anything:
 *
 * - `--semi-space-growth-factor=1`: by default V8 grows the young generation while start-up
 *   allocates fast (loading the modules, re-verifying the peer cache) up to 128 MiB on a 64-bit
 *   machine with plenty of memory, and keeps it — a third of an idle buyer's RSS. With factor 1 it
 *   stays at its initial size; scavenges get more frequent and stay short (little survives).
 * - `--heap-growing-percent=20`: the old generation may grow 20 % over what survived the last full
 *   GC before the next one, instead of up to 4× when the process is busy, so garbage left by large
 *   answers (`/_svc/peers`, `/v1/models` with 1,000 peers) is collected sooner.
 *
 * A user who passes any heap-sizing flag (node flags or NODE_OPTIONS) keeps their own choice.
 */
import { setFlagsFromString } from 'node:v8';
import { commandWords } from './program.js';

/** The flags applied, in order. */
export const BUYER_V8_FLAGS = ['--semi-space-growth-factor=1', '--heap-growing-percent=20'];

const USER_HEAP_FLAG =
  /--(max|min)[-_]semi[-_]space[-_]size|--semi[-_]space[-_]growth[-_]factor|--heap[-_]growing[-_]percent|--optimize[-_]for[-_]size/;

/** The commands that run a buyer: `svc buyer start`, and `svc gateway start` with its own. */
const BUYER_HOSTS = new Set(['buyer', 'gateway']);

/** Applies BUYER_V8_FLAGS for a command that runs a buyer; returns whether it did. */
export function applyMemoryPolicy(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  const [group, command] = commandWords(argv);
  if (group === undefined || !BUYER_HOSTS.has(group) || command !== 'start') return false;
  const userFlags = [...process.execArgv, env.NODE_OPTIONS ?? ''].join(' ');
  if (USER_HEAP_FLAG.test(userFlags)) return false;
  for (const flag of BUYER_V8_FLAGS) setFlagsFromString(flag);
  return true;
}
