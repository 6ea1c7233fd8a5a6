/**
 * V8 young-generation policy of the long-running buyer (decision 098). By default V8 grows the
 * young generation ("new space") while start-up allocates fast — loading the modules and
 * re-verifying the peer cache — up to 128 MiB on a 64-bit machine with plenty of memory, and
 * keeps it: that is a third of an idle buyer's RSS. The semi-space size can only be set when the
 * process starts (`--max-semi-space-size`), but the growth factor is read whenever V8 considers
 * growing, so `svc buyer start` sets it to 1 before it loads anything: the young generation stays
 * at its initial size. Scavenges get more frequent (each is short: the buyer keeps little alive).
 * A user who sets a semi-space flag (node flags or NODE_OPTIONS) keeps their own choice.
 */
import { setFlagsFromString } from 'node:v8';
import { commandWords } from './program.js';

const SEMI_SPACE_FLAG = /--(max|min)[-_]semi[-_]space[-_]size|--semi[-_]space[-_]growth[-_]factor/;

/** Keeps the young generation small for `svc buyer start`; returns whether it did. */
export function applyMemoryPolicy(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  const [group, command] = commandWords(argv);
  if (group !== 'buyer' || command !== 'start') return false;
  const userFlags = [...process.execArgv, env.NODE_OPTIONS ?? ''].join(' ');
  if (SEMI_SPACE_FLAG.test(userFlags)) return false;
  setFlagsFromString('--semi-space-growth-factor=1');
  return true;
}
