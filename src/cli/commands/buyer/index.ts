/** `svc buyer ...`: the local buyer proxy and its wallets. */
import type { Command } from 'commander';
import type { CliIo } from '../../io.js';
import { registerChannelsCommands } from './channels.js';
import { registerDepositCommand } from './deposit.js';
import { registerIdentityCommands } from './identity.js';
import { registerMeteringCommand } from './metering.js';

export function registerBuyerCommands(program: Command, io: CliIo): void {
  const buyer = program
    .command('buyer')
    .description('the local buyer: finds sellers, routes requests, pays them');
  registerIdentityCommands(buyer, io);
  registerDepositCommand(buyer, io);
  registerMeteringCommand(buyer, io);
  registerChannelsCommands(buyer, io);
}
