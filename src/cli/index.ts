/** The `svc` command-line interface. `main(argv)` runs one invocation and returns its exit code. */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CommanderError } from 'commander';
import { ConfigError } from '../config/index.js';
import { errorMessage, isSvcError } from '../errors/index.js';
import { NotADirectoryError } from '../files/index.js';
import { CliError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, exitCodeOfSvcError } from './errors.js';
import { type CliIo, processIo } from './io.js';
import { applyMemoryPolicy } from './memory.js';
import { commandWord, createProgram } from './program.js';

export { CliError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './errors.js';
export type { CliIo } from './io.js';

/**
 * Runs `svc <argv...>`; never calls process.exit. Without `io` it is the process's own run (the
 * `svc` binary), which also applies the process-wide memory policy (decision 098).
 */
export async function main(argv: string[], givenIo?: CliIo): Promise<number> {
  const io = givenIo ?? processIo();
  if (givenIo === undefined) applyMemoryPolicy(argv, io.env);
  try {
    // A coding tool takes the raw argument vector: every option after its name is the tool's
    // (`--version`, `--json` included), which commander would read as svc's own.
    if (isToolWord(commandWord(argv))) {
      const code = await (await import('./commands/tools.js')).launchTool(argv, io);
      if (code !== 0) throw new CliError('', code);
      return EXIT_OK;
    }
    const program = await createProgram(io, argv);
    await program.parseAsync(argv, { from: 'user' });
    return EXIT_OK;
  } catch (error) {
    return reportError(error, io);
  }
}

function isToolWord(word: string | undefined): boolean {
  return word === 'claude' || word === 'codex' || word === 'opencode';
}

function reportError(error: unknown, io: CliIo): number {
  if (error instanceof CommanderError) {
    // Help and version "errors" are successful exits; everything else is a usage error.
    if (
      error.code === 'commander.helpDisplayed' ||
      error.code === 'commander.version' ||
      error.exitCode === 0
    ) {
      return EXIT_OK;
    }
    if (error.code === 'commander.help') return EXIT_OK;
    return EXIT_USAGE;
  }
  if (error instanceof CliError) {
    // An empty message only carries an exit code (e.g. a launched tool's own).
    if (error.message) io.stderr(`error: ${error.message}\n`);
    return error.exitCode;
  }
  if (error instanceof ConfigError || error instanceof NotADirectoryError || isSvcError(error)) {
    io.stderr(`error: ${error.message}\n`);
    return exitCodeOfSvcError(error);
  }
  const message = errorMessage(error);
  io.stderr(`error: ${message}\n(run with --log-level debug for details)\n`);
  if (io.env.SVC_DEBUG && error instanceof Error && error.stack) io.stderr(`${error.stack}\n`);
  return EXIT_FAILURE;
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  // Not a top-level await, so that a command module imported lazily never waits on this one.
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
