/** `svc gateway ...`: the keyed gateway and its administration. */
import type { Command } from 'commander';
import type { CliIo } from '../../io.js';
import { registerConsoleCommands } from './console.js';
import { registerKeyCommands } from './key.js';
import { registerLogCommands } from './logs.js';
import { registerMemberCommands } from './member.js';
import { registerPolicyCommands } from './policy.js';
import { registerStartCommand } from './start.js';
import { registerWorkspaceCommands } from './workspace.js';

export function registerGatewayCommands(program: Command, io: CliIo): void {
  const gateway = program
    .command('gateway')
    .description(
      'the keyed gateway: API keys, workspaces, members, budgets, policies, request logs',
    )
    .option('--database-url <url>', 'PostgreSQL URL (default: SQLite in <data-dir>/gateway/)');
  registerStartCommand(gateway, io);
  registerKeyCommands(gateway, io);
  registerWorkspaceCommands(gateway, io);
  registerMemberCommands(gateway, io);
  registerPolicyCommands(gateway, io);
  registerLogCommands(gateway, io);
  registerConsoleCommands(gateway, io);
}
