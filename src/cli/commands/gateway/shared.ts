/** What the gateway commands share: opening the store, limit flags, formatting. */
import { type Command, Option } from 'commander';
import { runningDevBuyerDir } from '../../../devnet/index.js';
import type { GatewayStore, Limits } from '../../../gateway/index.js';
import { createStore, PERIODS, parseLimitUsd } from '../../../gateway/index.js';
import { formatUsd } from '../../../money/index.js';
import { CliContext } from '../../context.js';
import type { CliIo } from '../../io.js';

/** Options every `svc gateway ...` command may carry (declared on the group). */
export interface GatewayGroupOptions {
  databaseUrl?: string;
}

/**
 * The context of a gateway command. With no data directory chosen (`--data-dir`, SVC_DATA_DIR)
 * while `svc up` runs from the default one, the commands act on the local network's gateway
 * (docs/decisions/127-commands-find-the-running-local-network.md).
 */
function gatewayContext(command: Command, io: CliIo): CliContext {
  const ctx = CliContext.of(command, io);
  if (ctx.options.dataDir !== undefined || io.env.SVC_DATA_DIR !== undefined) return ctx;
  const devDir = runningDevBuyerDir(ctx.dataDir);
  if (!devDir) return ctx;
  io.stderr(
    `svc: using the running local network's gateway (${devDir}; --data-dir chooses another)\n`,
  );
  return new CliContext(io, { ...ctx.options, dataDir: devDir });
}

/** Runs `body` with the configured store open (PostgreSQL URL or SQLite in the data dir). */
export async function withStore<T>(
  command: Command,
  io: CliIo,
  body: (store: GatewayStore, ctx: CliContext) => Promise<T>,
): Promise<T> {
  const ctx = gatewayContext(command, io);
  const { databaseUrl } = command.optsWithGlobals<GatewayGroupOptions>();
  const config = ctx.loadConfig(databaseUrl ? { 'gateway.databaseUrl': databaseUrl } : {});
  const store = await createStore({
    dataDir: ctx.dataDir,
    databaseUrl: config.config.gateway.databaseUrl,
  });
  try {
    return await body(store, ctx);
  } finally {
    await store.close();
  }
}

/** Adds `--daily-limit` ... `--total-limit <usd>`. */
export function addLimitOptions(command: Command): Command {
  for (const period of PERIODS) {
    command.addOption(
      new Option(`--${period}-limit <usd>`, `${period} budget in USD ("none" removes it)`),
    );
  }
  return command;
}

/** Reads the limit flags that were given. */
export function limitsFromOptions(options: Record<string, unknown>): Partial<Limits> {
  const limits: Partial<Limits> = {};
  for (const period of PERIODS) {
    const text = options[`${period}Limit`];
    if (typeof text === 'string') limits[period] = parseLimitUsd(`--${period}-limit`, text);
  }
  return limits;
}

/** "5.000000" or "-" for no limit. */
export function limitText(limit: bigint | null): string {
  return limit === null ? '-' : formatUsd(limit);
}

/** ISO time or "-". */
export function timeText(ms: number | null): string {
  return ms === null ? '-' : new Date(ms).toISOString();
}

/** JSON-friendly limits. */
export function limitsJson(limits: Limits): Record<string, string | null> {
  return Object.fromEntries(
    PERIODS.map((period) => [period, limits[period] === null ? null : formatUsd(limits[period]!)]),
  );
}
