/** `svc buyer ...`: the local buyer proxy and its wallets. */
import type { Command } from 'commander';
import type { CliIo } from '../../io.js';
import { registerConnectionCommands } from './connection.js';
import { registerIdentityCommands } from './identity.js';
import { registerRouteCommands } from './route.js';
import { registerStartCommand } from './start.js';

export function registerBuyerCommands(program: Command, io: CliIo): void {
  const buyer = program
    .command('buyer')
    .description('the local buyer: finds sellers, routes requests, pays them');
  registerIdentityCommands(buyer, io);
  registerRouteCommands(buyer, io);
  registerConnectionCommands(buyer, io);
  registerStartCommand(buyer, io);
}
