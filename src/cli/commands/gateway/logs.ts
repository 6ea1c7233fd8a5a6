/** `svc gateway logs` and `svc gateway usage`: the request log and summaries of it. */
import type { Command } from 'commander';
import type { GatewayStore, LogFilter, UsageDimension } from '../../../gateway/index.js';
import { formatUsd } from '../../../money/index.js';
import { CliError, usageError } from '../../errors.js';
import type { CliIo } from '../../io.js';
import { printJson, printTable } from '../../output.js';
import { withStore } from './shared.js';

interface FilterFlags {
  key?: string;
  workspace?: string;
  since?: string;
  limit?: string;
}

/** `--since` as an ISO time, a date, or a duration like 30m, 24h, 7d. */
export function parseSince(text: string, now: number): number {
  const duration = /^(\d+)([mhd])$/.exec(text);
  if (duration)
    return (
      now -
      Number(duration[1]) *
        { m: 60_000, h: 3_600_000, d: 86_400_000 }[duration[2] as 'm' | 'h' | 'd']
    );
  const at = Date.parse(text);
  if (Number.isNaN(at))
    throw usageError(`--since: "${text}" is not a time (use e.g. 24h, 7d or 2026-03-01)`);
  return at;
}

async function filterOf(store: GatewayStore, flags: FilterFlags): Promise<LogFilter> {
  let workspaceId: string | undefined;
  if (flags.workspace) {
    const ws = await store.findWorkspaceByName(flags.workspace);
    if (!ws) throw new CliError(`no workspace named "${flags.workspace}"`);
    workspaceId = ws.id;
  }
  if (flags.limit !== undefined && !/^\d+$/.test(flags.limit))
    throw usageError('--limit must be a whole number');
  return {
    keyId: flags.key,
    workspaceId,
    since: flags.since ? parseSince(flags.since, Date.now()) : undefined,
    limit: flags.limit ? Number(flags.limit) : undefined,
  };
}

function filterOptions(command: Command): Command {
  return command
    .option('--key <keyId>', 'only this key')
    .option('--workspace <name>', 'only this workspace')
    .option('--since <time>', 'from this time: 24h, 7d, or an ISO date');
}

export function registerLogCommands(gateway: Command, io: CliIo): void {
  filterOptions(gateway.command('logs').description('the request log, newest first'))
    .option('--limit <n>', 'at most n rows', '100')
    .option('--csv', 'print CSV')
    .addHelpText(
      'after',
      '\nExamples:\n  svc gateway logs --since 24h\n  svc gateway logs --key key_abc --csv > requests.csv',
    )
    .action(async (flags: FilterFlags & { csv?: boolean }, command: Command) => {
      await withStore(command, io, async (store, ctx, gateway) => {
        const records = await store.queryLogs(await filterOf(store, flags));
        if (flags.csv && !ctx.json) return io.stdout(gateway.logsToCsv(records));
        const rows = records.map(gateway.logRowJson);
        if (ctx.json) return printJson(io, rows);
        printTable(
          io,
          [
            'TIME',
            'KEY',
            'ROUTE',
            'MODEL',
            'STATUS',
            'ERROR',
            'TOKENS IN/CACHED/OUT',
            'COST',
            'MS',
            'END USER',
          ],
          rows.map((r) => [
            r.at,
            r.keyId ?? '-',
            r.route,
            r.servedModel ?? r.requestedModel ?? '-',
            String(r.status),
            r.errorCode ?? '-',
            `${r.inputTokens}/${r.cachedInputTokens}/${r.outputTokens}`,
            r.costUsd,
            String(r.latencyMs ?? '-'),
            r.endUser ?? '-',
          ]),
        );
      });
    });

  filterOptions(
    gateway
      .command('usage')
      .description('spend and tokens summarised by key, member, model, seller or end user'),
  )
    .option('--by <dimension>', 'key, member, model, seller or end_user', 'key')
    .addHelpText(
      'after',
      '\nExamples:\n  svc gateway usage --by model --since 7d\n  svc gateway usage --by end_user --key key_abc --json',
    )
    .action(async (flags: FilterFlags & { by: string }, command: Command) => {
      const dimensions = ['key', 'member', 'model', 'seller', 'end_user'];
      if (!dimensions.includes(flags.by))
        throw usageError(`--by must be one of ${dimensions.join(', ')}`);
      await withStore(command, io, async (store, ctx) => {
        const rows = await store.usageSummary(
          flags.by as UsageDimension,
          await filterOf(store, flags),
        );
        if (ctx.json)
          return printJson(
            io,
            rows.map((r) => ({ ...r, costUsd: formatUsd(r.costMicro), costMicro: undefined })),
          );
        printTable(
          io,
          [flags.by.toUpperCase(), 'REQUESTS', 'INPUT', 'CACHED', 'OUTPUT', 'COST USD'],
          rows.map((r) => [
            r.group ?? '-',
            String(r.requests),
            String(r.inputTokens),
            String(r.cachedInputTokens),
            String(r.outputTokens),
            formatUsd(r.costMicro),
          ]),
        );
        const notServed = await store.unservedRequests(await filterOf(store, flags));
        if (notServed > 0) {
          io.stdout(
            `${notServed} request(s) refused or failed before any seller answered ($0) are not counted above.\n`,
          );
        }
      });
    });
}
