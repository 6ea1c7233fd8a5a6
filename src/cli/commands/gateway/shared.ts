/**
 * What the gateway commands share: opening the store, limit flags, formatting. Registering the
 * commands loads no gateway code: `withStore` loads the gateway folder when an action runs
 * (docs/decisions/215-commands-load-their-code-when-they-run.md).
 */
import { type Command, Option } from 'commander';
import type { GatewayStore, Limits } from '../../../gateway/index.js';
import { formatUsd } from '../../../money/index.js';
import { CliContext } from '../../context.js';
import { LIMIT_PERIODS } from '../../defaults.js';
import type { CliIo } from '../../io.js';

/** The gateway folder's face, as an action receives it. */
export type GatewayModule = typeof import('../../../gateway/index.js');

/** Options every `svc gateway ...` command may carry (declared on the group). */
export interface GatewayGroupOptions {
  databaseUrl?: string;
}

/**
 * The context of a gateway command. With no data directory chosen (`--data-dir`, SVC_DATA_DIR)
 * while `svc up` runs from the default one, the commands act on the local network's gateway
 * (docs/decisions/127-commands-find-the-running-local-network.md).
 */
async function gatewayContext(command: Command, io: CliIo): Promise<CliContext> {
  const ctx = CliContext.of(command, io);
  if (ctx.options.dataDir !== undefined || io.env.SVC_DATA_DIR !== undefined) return ctx;
  const { runningDevBuyerDir } = await import('../../../devnet/index.js');
  const devDir = runningDevBuyerDir(ctx.dataDir);
  if (!devDir) return ctx;
  io.stderr(
    `svc: using the running local network's gateway (${devDir}; --data-dir chooses another)\n`,
  );
  return new CliContext(io, { ...ctx.options, dataDir: devDir });
}

/**
 * Runs `body` with the configured store open (PostgreSQL URL or SQLite in the data dir), handing
 * it the gateway folder loaded for the purpose.
 */
export async function withStore<T>(
  command: Command,
  io: CliIo,
  body: (store: GatewayStore, ctx: CliContext, gateway: GatewayModule) => Promise<T>,
): Promise<T> {
  const ctx = await gatewayContext(command, io);
  const { databaseUrl } = command.optsWithGlobals<GatewayGroupOptions>();
  const config = ctx.loadConfig(databaseUrl ? { 'gateway.databaseUrl': databaseUrl } : {});
  const gateway = await import('../../../gateway/index.js');
  const store = await gateway.createStore({
    dataDir: ctx.dataDir,
    databaseUrl: config.config.gateway.databaseUrl,
  });
  try {
    return await body(store, ctx, gateway);
  } finally {
    await store.close();
  }
}

/** Adds `--daily-limit` ... `--total-limit <usd>`. */
export function addLimitOptions(command: Command): Command {
  for (const period of LIMIT_PERIODS) {
    command.addOption(
      new Option(`--${period}-limit <usd>`, `${period} budget in USD ("none" removes it)`),
    );
  }
  return command;
}

/** Reads the limit flags that were given. */
export function limitsFromOptions(
  gateway: GatewayModule,
  options: Record<string, unknown>,
): Partial<Limits> {
  const limits: Partial<Limits> = {};
  for (const period of LIMIT_PERIODS) {
    const text = options[`${period}Limit`];
    if (typeof text === 'string') limits[period] = gateway.parseLimitUsd(`--${period}-limit`, text);
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
    LIMIT_PERIODS.map((period) => [
      period,
      limits[period] === null ? null : formatUsd(limits[period]!),
    ]),
  );
}
