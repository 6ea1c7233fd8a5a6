/**
 * The `svc` command tree. Each command group lives in commands/<group>; this file only wires them.
 * Groups are imported lazily: a run of one command (`svc buyer start`) loads only the group that
 * defines it, so a long-running buyer does not hold the gateway, chain tools, devnet or x402 code
 * (decision 098). Anything else (`svc --help`, `svc help x`, an unknown command) loads every group,
 * so help, suggestions and errors are exactly as with all groups registered. Loading a group is
 * cheap in turn: its actions load the folders they use when they run
 * (docs/decisions/215-commands-load-their-code-when-they-run.md).
 */
import { Command, Option } from 'commander';
import { LOG_LEVELS } from '../log/index.js';
import type { CliIo } from './io.js';
import { packageVersion } from './version.js';

/** Registers one command group on the root program. */
export type CommandGroup = (program: Command, io: CliIo) => void;

/** A group: the top-level command names it registers and how to load its registrar. */
export interface GroupEntry {
  readonly commands: readonly string[];
  readonly load: () => Promise<CommandGroup>;
}

/** Every group, in registration order (`group.test` checks `commands` against what each registers). */
export const GROUPS: readonly GroupEntry[] = [
  {
    commands: ['buyer'],
    load: async () => (await import('./commands/buyer/index.js')).registerBuyerCommands,
  },
  {
    commands: ['audit'],
    load: async () => (await import('./commands/audit.js')).registerAuditCommands,
  },
  {
    commands: ['chain'],
    load: async () => (await import('./commands/chain.js')).registerChainCommands,
  },
  {
    commands: ['config'],
    load: async () => (await import('./commands/config.js')).registerConfigCommands,
  },
  {
    commands: ['network'],
    load: async () => (await import('./commands/network/index.js')).registerNetworkCommands,
  },
  {
    commands: ['seller'],
    load: async () => (await import('./commands/seller.js')).registerSellerCommands,
  },
  {
    commands: ['gateway'],
    load: async () => (await import('./commands/gateway/index.js')).registerGatewayCommands,
  },
  {
    commands: ['up', 'down', 'status'],
    load: async () => (await import('./commands/up.js')).registerUpCommands,
  },
  {
    commands: ['claude', 'codex', 'opencode'],
    load: async () => (await import('./commands/tools.js')).registerToolCommands,
  },
  {
    commands: ['indexer'],
    load: async () => (await import('./commands/indexer.js')).registerIndexerCommands,
  },
  {
    commands: ['tunnel'],
    load: async () => (await import('./commands/tunnel.js')).registerTunnelCommands,
  },
  {
    commands: ['x402'],
    load: async () => (await import('./commands/x402.js')).registerX402Commands,
  },
];

/** Root options that take a value (so the word after them is not the command). */
// `--database-url` is the gateway group's: `svc gateway --database-url <url> start`.
const VALUE_OPTIONS = new Set(['--data-dir', '--config', '--log-level', '--database-url']);

/** The command words of `argv` (skipping the root options and their values), up to `--`. */
export function commandWords(argv: readonly string[]): string[] {
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (arg.startsWith('-')) {
      if (VALUE_OPTIONS.has(arg)) i++;
      continue;
    }
    words.push(arg);
  }
  return words;
}

/** The first command word of `argv` (after the root options), if any. */
export function commandWord(argv: readonly string[]): string | undefined {
  return commandWords(argv)[0];
}

/** The groups a run of `argv` needs: the one defining its command, or all of them. */
export function groupsFor(argv: readonly string[] | undefined): readonly GroupEntry[] {
  if (argv === undefined) return GROUPS;
  const word = commandWord(argv);
  // `svc --version` needs no command: answered without loading any group.
  if (word === undefined && argv.some((arg) => arg === '--version' || arg === '-V')) return [];
  const group = GROUPS.find((entry) => word !== undefined && entry.commands.includes(word));
  return group ? [group] : GROUPS;
}

/**
 * Builds the program; `exitOverride` turns commander's exits into thrown CommanderErrors. With
 * `argv`, only the group that defines its command is loaded; without, every group.
 */
export async function createProgram(io: CliIo, argv?: readonly string[]): Promise<Command> {
  const program = new Command('svc');
  program
    .description('Buy model inference from independent sellers on a peer-to-peer network.')
    .version(packageVersion(), '-V, --version', 'print the svc version')
    .option('--data-dir <path>', 'data directory (env SVC_DATA_DIR, default ~/.svc)')
    .option('--config <path>', 'config file (default <data-dir>/config.json)')
    .option('--json', 'print data as JSON for scripts')
    .addOption(new Option('--log-level <level>', 'log verbosity').choices(LOG_LEVELS))
    .showHelpAfterError('(run with --help for usage)')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
      outputError: (text, write) => write(text),
    });
  program.configureHelp({ showGlobalOptions: true, sortSubcommands: true });
  const registrars = await Promise.all(groupsFor(argv).map((group) => group.load()));
  for (const register of registrars) register(program, io);
  return program;
}
