/** `svc buyer metering`: authoritative per-channel totals (requests, tokens, signed, settled, status). */
import type { Command } from 'commander';
import { errorMessage } from '../../../errors/index.js';
import { formatUsd } from '../../../money/index.js';
import type { MeteringEntry } from '../../../payments/index.js';
import { CliContext } from '../../context.js';
import type { CliIo } from '../../io.js';
import { printJson, printTable } from '../../output.js';

/** Opens the buyer's payment state for a command (no timers); close it with `payments.stop()`. */
export async function openPayments(ctx: CliContext) {
  const { openBuyerPayments } = await import('../../../payments/index.js');
  return openBuyerPayments({
    dataDir: ctx.dataDir,
    chainConfig: ctx.loadConfig().config.chain,
    identities: await ctx.identities(),
    logger: ctx.logger,
  });
}

function short(hex: string): string {
  return `${hex.slice(0, 10)}…${hex.slice(-4)}`;
}

export function registerMeteringCommand(buyer: Command, io: CliIo): void {
  buyer
    .command('metering')
    .description('authoritative per-channel totals: requests, tokens, signed and settled amounts')
    .option('--identity <name>', 'only this identity')
    .option('--offline', 'do not refresh settled amounts from the chain')
    .addHelpText('after', '\nExamples:\n  svc buyer metering\n  svc buyer metering --json')
    .action(async (options: { identity?: string; offline?: boolean }, command: Command) => {
      const ctx = CliContext.of(command, io);
      let entries: MeteringEntry[];
      let note: string | undefined;
      let opened: Awaited<ReturnType<typeof openPayments>> | undefined;
      try {
        opened = await openPayments(ctx);
      } catch (error) {
        note = `${errorMessage(error)} Settled amounts as last seen.`;
      }
      if (!opened) {
        const { readStoredChannels, toMeteringEntry } = await import('../../../payments/index.js');
        entries = readStoredChannels(ctx.dataDir).map(toMeteringEntry);
      } else {
        const { payments, chain } = opened;
        try {
          entries = await payments.channels.metering({ refresh: !options.offline });
        } catch {
          note = `chain unreachable at ${chain.rpcUrl}: settled amounts as last seen`;
          entries = await payments.channels.metering();
        } finally {
          await payments.stop();
        }
      }
      if (options.identity)
        entries = entries.filter((entry) => entry.identity === options.identity);
      if (ctx.json) {
        printJson(io, {
          channels: entries.map((entry) => ({
            ...entry,
            lockUsd: formatUsd(entry.lockMicro),
            signedUsd: formatUsd(entry.signedMicro),
            settledUsd: formatUsd(entry.settledMicro),
          })),
          ...(note ? { warning: note } : {}),
        });
        return;
      }
      if (entries.length === 0) io.stdout('no payment channels yet\n');
      else {
        printTable(
          io,
          [
            'CHANNEL',
            'IDENTITY',
            'SELLER',
            'STATUS',
            'REQUESTS',
            'TOKENS IN/CACHED/OUT',
            'SIGNED',
            'SETTLED',
          ],
          entries.map((entry) => [
            short(entry.channelId),
            entry.identity,
            short(entry.seller),
            entry.status,
            String(entry.requests),
            `${entry.inputTokens}/${entry.cachedInputTokens}/${entry.outputTokens}`,
            formatUsd(entry.signedMicro),
            formatUsd(entry.settledMicro),
          ]),
        );
      }
      if (note) io.stderr(`warning: ${note}\n`);
    });
}
