/** `svc buyer channels list|close|reclaim`: a buyer's payment channels and getting money back. */
import type { Command } from 'commander';
import type { Hex } from 'viem';
import { SvcError } from '../../../errors/index.js';
import { formatUsd } from '../../../money/index.js';
import type { BuyerChannelRow } from '../../../payments/index.js';
import { CliContext } from '../../context.js';
import type { CliIo } from '../../io.js';
import { printJson, printTable } from '../../output.js';
import { openPayments } from './metering.js';

function parseChannelId(text: string): Hex {
  if (!/^0x[0-9a-fA-F]{64}$/.test(text)) {
    throw new SvcError('invalid_argument', {
      message: `"${text}" is not a channel id: expected 0x followed by 64 hex characters (see \`svc buyer channels list\`)`,
    });
  }
  return text.toLowerCase() as Hex;
}

function view(row: BuyerChannelRow) {
  return {
    channelId: row.channelId,
    identity: row.identity,
    seller: row.seller,
    status: row.status,
    lockUsd: formatUsd(row.confirmedLockMicro),
    signedUsd: formatUsd(row.signedMicro),
    settledUsd: formatUsd(row.settledMicro),
    unspentUsd: formatUsd(row.confirmedLockMicro - row.signedMicro),
    requests: row.requests,
    reclaimableAt: row.reclaimableAt ? new Date(row.reclaimableAt * 1000).toISOString() : null,
  };
}

function chainFailure(error: unknown, rpcUrl: string): never {
  if (error instanceof SvcError) throw error;
  throw new SvcError('chain_unavailable', {
    message: `The transaction failed: ${(error as Error).message.split('\n')[0]} (chain ${rpcUrl})`,
    cause: error,
  });
}

export function registerChannelsCommands(buyer: Command, io: CliIo): void {
  const channels = buyer
    .command('channels')
    .description("the buyer's payment channels with sellers; close them to get unspent money back");
  registerChannelsList(channels, io);
  registerChannelsClose(channels, io);
  registerChannelsReclaim(channels, io);
}

/** Registers `svc buyer channels list`. */
function registerChannelsList(channels: Command, io: CliIo): void {
  channels
    .command('list')
    .description('list payment channels (open and closing; --all for closed too)')
    .option('--all', 'include closed channels')
    .addHelpText(
      'after',
      '\nExamples:\n  svc buyer channels list\n  svc buyer channels list --all --json',
    )
    .action(async (options: { all?: boolean }, command: Command) => {
      const ctx = CliContext.of(command, io);
      // Listing needs no chain: it reads the buyer's own records.
      const { readStoredChannels } = await import('../../../payments/index.js');
      const rows = readStoredChannels(ctx.dataDir).filter(
        (row) => options.all || row.status !== 'closed',
      );
      if (ctx.json) {
        printJson(io, rows.map(view));
        return;
      }
      if (rows.length === 0) {
        io.stdout(
          options.all
            ? 'no payment channels\n'
            : 'no open payment channels (--all shows closed ones)\n',
        );
        return;
      }
      printTable(
        io,
        ['CHANNEL', 'IDENTITY', 'SELLER', 'STATUS', 'LOCK', 'SIGNED', 'SETTLED', 'RECLAIMABLE AT'],
        rows
          .map(view)
          .map((row) => [
            row.channelId,
            row.identity,
            row.seller,
            row.status,
            row.lockUsd,
            row.signedUsd,
            row.settledUsd,
            row.reclaimableAt ?? '-',
          ]),
      );
    });
}

/** Registers `svc buyer channels close`. */
function registerChannelsClose(channels: Command, io: CliIo): void {
  channels
    .command('close')
    .description(
      'ask to close a channel; the seller may settle during the grace period, then reclaim',
    )
    .argument('<channelId>')
    .addHelpText('after', '\nExamples:\n  svc buyer channels close 0x3f...9a')
    .action(async (id: string, _options, command: Command) => {
      const ctx = CliContext.of(command, io);
      const { payments, chain } = await openPayments(ctx);
      try {
        const row = await payments.channels
          .requestClose(parseChannelId(id))
          .catch((error: unknown) => chainFailure(error, chain.rpcUrl));
        if (ctx.json) printJson(io, view(row));
        else if (row.status === 'closed')
          io.stdout(`channel ${row.channelId} is closed; unspent money is back in credits\n`);
        else
          io.stdout(
            `close requested for ${row.channelId}\nreclaim the unspent ${formatUsd(row.confirmedLockMicro - row.signedMicro)} USDC after ${view(row).reclaimableAt}: svc buyer channels reclaim ${row.channelId}\n`,
          );
      } finally {
        await payments.stop();
      }
    });
}

/** Registers `svc buyer channels reclaim`. */
function registerChannelsReclaim(channels: Command, io: CliIo): void {
  channels
    .command('reclaim')
    .description('take back the unspent lock of a channel after its close grace period')
    .argument('<channelId>')
    .addHelpText('after', '\nExamples:\n  svc buyer channels reclaim 0x3f...9a')
    .action(async (id: string, _options, command: Command) => {
      const ctx = CliContext.of(command, io);
      const { payments, chain } = await openPayments(ctx);
      try {
        const row = await payments.channels
          .reclaim(parseChannelId(id))
          .catch((error: unknown) => chainFailure(error, chain.rpcUrl));
        if (ctx.json) printJson(io, view(row));
        else
          io.stdout(
            `channel ${row.channelId} is ${row.status}; unspent money is back in credits\n`,
          );
      } finally {
        await payments.stop();
      }
    });
}
