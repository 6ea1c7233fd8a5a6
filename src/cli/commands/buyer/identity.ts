/** `svc buyer identity create|list|remove`. */
import type { Command } from 'commander';
import type { IdentityListing } from '../../../identity/index.js';
import { CliContext } from '../../context.js';
import type { CliIo } from '../../io.js';
import { printJson, printTable } from '../../output.js';

export function registerIdentityCommands(buyer: Command, io: CliIo): void {
  const identity = buyer
    .command('identity')
    .description(
      'wallets the buyer can pay from (the "default" one lives in <data-dir>/identity.key)',
    );

  identity
    .command('create')
    .description(
      'create a named identity: a new key stored in the data dir, or a reference to one held outside',
    )
    .argument('<name>', 'letters, digits, "-" and "_"')
    .option(
      '--key-from <ref>',
      'env:<VARIABLE> or file:<path> holding a hex private key; only the reference is stored',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  svc buyer identity create team-a\n  svc buyer identity create ops --key-from env:OPS_WALLET_KEY',
    )
    .action(async (name: string, options: { keyFrom?: string }, command: Command) => {
      const ctx = CliContext.of(command, io);
      const record = (await ctx.identities()).create(name, { keyFrom: options.keyFrom });
      if (ctx.json) printJson(io, record);
      else {
        io.stdout(
          `created identity ${record.name}\n  address  ${record.address}\n  peer id  ${record.peerId}\n`,
        );
        io.stdout(`  key      ${record.reference ?? 'stored in the data directory'}\n`);
      }
    });

  identity
    .command('list')
    .description('list identities, their addresses and whether each can load')
    .option('--balances', 'also show wallet USDC and deposited credits')
    .action(async (options: { balances?: boolean }, command: Command) => {
      const ctx = CliContext.of(command, io);
      const listings = (await ctx.identities()).list();
      const balances = options.balances
        ? await (await import('./balances.js')).readBalances(ctx, listings)
        : undefined;
      if (ctx.json) {
        printJson(
          io,
          listings.map((listing, index) => ({
            ...listing,
            ...(balances ? { balances: balances[index] } : {}),
          })),
        );
        return;
      }
      const headers = ['NAME', 'ADDRESS', 'KEY', 'STATUS', ...(balances ? ['BALANCES'] : [])];
      const rows = listings.map((listing: IdentityListing, index) => [
        listing.name,
        listing.address,
        listing.reference ?? 'stored',
        listing.loadable ? 'ok' : `cannot load: ${listing.problem}`,
        ...(balances ? [balances[index]!.summary] : []),
      ]);
      printTable(io, headers, rows);
    });

  identity
    .command('remove')
    .description('stop using an identity; its files move to identities/archive/ (never deleted)')
    .argument('<name>')
    .action(async (name: string, _options, command: Command) => {
      const ctx = CliContext.of(command, io);
      const archive = (await ctx.identities()).remove(name);
      if (ctx.json) printJson(io, { name, archivedTo: archive });
      else io.stdout(`removed identity ${name}; archived to ${archive}\n`);
    });
}
