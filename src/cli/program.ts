/** The `svc` command tree. Each command group lives in commands/<group>; this file only wires them. */
import { Command, Option } from 'commander';
import { LOG_LEVELS } from '../log/index.js';
import { registerBuyerCommands } from './commands/buyer/index.js';
import { registerChainCommands } from './commands/chain.js';
import { registerConfigCommands } from './commands/config.js';
import { registerGatewayCommands } from './commands/gateway/index.js';
import { registerNetworkCommands } from './commands/network/index.js';
import { registerSellerCommands } from './commands/seller.js';
import { registerToolCommands } from './commands/tools.js';
import { registerUpCommands } from './commands/up.js';
import { registerX402Commands } from './commands/x402.js';
import type { CliIo } from './io.js';
import { packageVersion } from './version.js';

/** Registers one command group on the root program. */
export type CommandGroup = (program: Command, io: CliIo) => void;

const GROUPS: CommandGroup[] = [
  registerBuyerCommands,
  registerChainCommands,
  registerConfigCommands,
  registerNetworkCommands,
  registerSellerCommands,
  registerGatewayCommands,
  registerUpCommands,
  registerToolCommands,
  registerX402Commands,
];

/** Builds the program; `exitOverride` turns commander's exits into thrown CommanderErrors. */
export function createProgram(io: CliIo): Command {
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
  for (const register of GROUPS) register(program, io);
  return program;
}
