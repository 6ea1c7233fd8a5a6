/** `svc gateway key create|list|show|limits|rotate|revoke|topup`. */
import type { Command } from 'commander';
import { SvcError } from '../../../errors/index.js';
import type { GatewayStore, KeyRecord } from '../../../gateway/index.js';
import { formatUsd } from '../../../money/index.js';
import type { CliContext } from '../../context.js';
import { LIMIT_PERIODS } from '../../defaults.js';
import { CliError, usageError } from '../../errors.js';
import type { CliIo } from '../../io.js';
import { printJson, printTable } from '../../output.js';
import {
  addLimitOptions,
  type GatewayModule,
  limitsFromOptions,
  limitsJson,
  limitText,
  timeText,
  withStore,
} from './shared.js';

interface CreateOptions {
  label: string;
  workspace?: string;
  member?: string;
  expires?: string;
  expiresInDays?: string;
  newIdentity?: boolean;
  identity?: string;
  allowTopup?: boolean;
  models?: string;
  [limit: string]: unknown;
}

/** The wallet address of a named identity in this data dir ('' when it is not here). */
async function walletOf(ctx: CliContext, identity: string): Promise<string> {
  const identities = await ctx.identities();
  const { DEFAULT_IDENTITY } = await import('../../../identity/index.js');
  if (identity === DEFAULT_IDENTITY) return identities.loadDefault().record.address;
  return identities.list().find((l) => l.name === identity)?.address ?? '';
}

async function requireKey(store: GatewayStore, id: string): Promise<KeyRecord> {
  const key = await store.getKey(id);
  if (!key) throw new CliError(`no key ${id}; list keys with \`svc gateway key list\``);
  return key;
}

function keyJson(gateway: GatewayModule, key: KeyRecord, now: number) {
  return {
    id: key.id,
    label: key.label,
    state: gateway.keyState(key, now),
    workspaceId: key.workspaceId,
    memberId: key.memberId,
    identity: key.identity,
    ownIdentity: key.ownIdentity,
    allowedModels: key.allowedModels,
    topupEnabled: key.topupEnabled,
    createdAt: new Date(key.createdAt).toISOString(),
    expiresAt: key.expiresAt === null ? null : new Date(key.expiresAt).toISOString(),
    limits: limitsJson(gateway.effectiveKeyLimits(key.adminLimits, key.ownerLimits)),
    adminLimits: limitsJson(key.adminLimits),
    ownerLimits: limitsJson(key.ownerLimits),
    policy: key.policy,
  };
}

export function registerKeyCommands(gateway: Command, io: CliIo): void {
  const key = gateway.command('key').description('API keys: create, list, limit, rotate, revoke');
  registerKeyCreate(key, io);
  registerKeyList(key, io);
  registerKeyShow(key, io);
  registerKeyLimits(key, io);
  registerKeyRotate(key, io);
  registerKeyRevoke(key, io);
  registerKeyTopup(key, io);
}

/** `svc gateway key create`: a key and its secret, shown once. */
function registerKeyCreate(key: Command, io: CliIo): void {
  addLimitOptions(
    key
      .command('create')
      .description('create a key; its secret is shown once')
      .requiredOption('--label <text>', 'a name for the key')
      .option('--workspace <name>', 'workspace that pays (default "Default")')
      .option('--member <name>', 'member who owns the key (counts against their key quota)')
      .option('--expires <date>', 'expiry date (YYYY-MM-DD or ISO time)')
      .option('--expires-in-days <n>', 'expire after n days')
      .option('--new-identity', 'give the key its own new wallet (and workspace)')
      .option('--identity <name>', "pay from this identity's workspace (created if needed)")
      .option('--allow-topup', 'allow x402 top-ups (keys with their own wallet only)')
      .option('--models <list>', 'comma-separated models the key may use'),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  svc gateway key create --label ci --weekly-limit 5\n  svc gateway key create --label app --new-identity --allow-topup --models gpt-4o,claude-sonnet-4',
    )
    .action(async (options: CreateOptions, command: Command) => {
      await withStore(command, io, async (store, ctx, gateway) => {
        const now = Date.now();
        if (options.newIdentity && options.identity)
          throw usageError('give --new-identity or --identity, not both');
        if (options.expires && options.expiresInDays)
          throw usageError('give --expires or --expires-in-days, not both');
        const expiresAt = options.expires
          ? gateway.parseExpiry(options.expires, now)
          : options.expiresInDays
            ? gateway.parseExpiresInDays(options.expiresInDays, now)
            : null;
        const created = await gateway.createKey(
          store,
          await ctx.identities(),
          {
            label: options.label,
            workspace: options.workspace,
            member: options.member,
            limits: limitsFromOptions(gateway, options),
            expiresAt,
            identity: options.newIdentity
              ? { kind: 'new' }
              : options.identity
                ? { kind: 'existing', name: options.identity }
                : undefined,
            allowTopup: options.allowTopup,
            models: options.models ? gateway.parseModelList(options.models) : null,
          },
          now,
        );
        if (ctx.json) {
          printJson(io, { ...keyJson(gateway, created.key, now), secret: created.secret });
          return;
        }
        io.stdout(`created key ${created.key.id} (${created.key.label})\n`);
        io.stdout(`  secret     ${created.secret}\n`);
        io.stdout(
          `  identity   ${created.key.identity}  ${await walletOf(ctx, created.key.identity)}\n`,
        );
        io.stdout('The secret is shown only now: store it safely.\n');
      });
    });
}

/** `svc gateway key list`: the keys, optionally of one workspace. */
function registerKeyList(key: Command, io: CliIo): void {
  key
    .command('list')
    .description('list keys')
    .option('--workspace <name>', 'only keys of this workspace')
    .action(async (options: { workspace?: string }, command: Command) => {
      await withStore(command, io, async (store, ctx, gateway) => {
        const now = Date.now();
        const workspaces = await store.listWorkspaces();
        const byId = new Map(workspaces.map((w) => [w.id, w.name]));
        const wanted = options.workspace
          ? workspaces.find((w) => w.name === options.workspace)
          : undefined;
        if (options.workspace && !wanted)
          throw new CliError(`no workspace named "${options.workspace}"`);
        const keys = await store.listKeys(wanted ? { workspaceId: wanted.id } : {});
        if (ctx.json)
          return printJson(
            io,
            keys.map((k) => keyJson(gateway, k, now)),
          );
        printTable(
          io,
          ['ID', 'LABEL', 'WORKSPACE', 'STATE', 'DAILY', 'WEEKLY', 'MONTHLY', 'TOTAL', 'EXPIRES'],
          keys.map((k) => {
            const limits = gateway.effectiveKeyLimits(k.adminLimits, k.ownerLimits);
            return [
              k.id,
              k.label,
              byId.get(k.workspaceId) ?? k.workspaceId,
              gateway.keyState(k, now),
              ...LIMIT_PERIODS.map((p) => limitText(limits[p])),
              timeText(k.expiresAt),
            ];
          }),
        );
      });
    });
}

/** `svc gateway key show`: one key with its state, limits and usage. */
function registerKeyShow(key: Command, io: CliIo): void {
  key
    .command('show')
    .description('one key: state, limits and usage (the GET /v1/key view)')
    .argument('<keyId>')
    .action(async (id: string, _options, command: Command) => {
      await withStore(command, io, async (store, ctx, gateway) => {
        const now = Date.now();
        const record = await requireKey(store, id);
        const address = await walletOf(ctx, record.identity);
        const view = await gateway.keyView(store, record, address, now);
        const details = { ...keyJson(gateway, record, now), view: view.data };
        if (ctx.json) return printJson(io, details);
        io.stdout(`${record.id}  ${record.label}  (${gateway.keyState(record, now)})\n`);
        io.stdout(
          `  identity  ${record.identity}${record.ownIdentity ? ' (own)' : ''}  ${address}\n`,
        );
        io.stdout(
          `  usage     ${view.data.usage.requests} requests, ${view.data.usage.spent_usd} USD\n`,
        );
        for (const period of LIMIT_PERIODS) {
          const limit = view.data.limits[period];
          io.stdout(
            `  ${period.padEnd(8)}  limit ${limit.limit_usd ?? '-'}  spent ${limit.spent_usd}  left ${limit.remaining_usd ?? '-'}\n`,
          );
        }
      });
    });
}

/** `svc gateway key limits`: a key's admin or owner limits. */
function registerKeyLimits(key: Command, io: CliIo): void {
  addLimitOptions(
    key
      .command('limits')
      .description(
        "set a key's limits (admin-set by default; the effective limit is the lower of admin and owner)",
      )
      .argument('<keyId>')
      .option('--owner', "set the owner's limits instead of the admin's"),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  svc gateway key limits key_abc --daily-limit 2 --total-limit none',
    )
    .action(async (id: string, options: Record<string, unknown>, command: Command) => {
      await withStore(command, io, async (store, ctx, gateway) => {
        const limits = limitsFromOptions(gateway, options);
        if (Object.keys(limits).length === 0)
          throw new CliError(
            'give at least one of --daily-limit, --weekly-limit, --monthly-limit, --total-limit',
          );
        await requireKey(store, id);
        await store.setKeyLimits(id, options.owner ? 'owner' : 'admin', limits);
        const record = await requireKey(store, id);
        const effective = gateway.effectiveKeyLimits(record.adminLimits, record.ownerLimits);
        const spend = await store.periodSpend('key', id, Date.now());
        const below = LIMIT_PERIODS.filter(
          (p) => effective[p] !== null && spend[p] >= effective[p]!,
        );
        if (ctx.json) return printJson(io, { id, limits: limitsJson(effective), exhausted: below });
        io.stdout(
          `limits of ${id}: ${LIMIT_PERIODS.map((p) => `${p} ${limitText(effective[p])}`).join(', ')}\n`,
        );
        for (const period of below) {
          io.stdout(
            `note: ${period} spend ${formatUsd(spend[period])} already reaches the limit; requests are refused until it resets\n`,
          );
        }
      });
    });
}

/** `svc gateway key rotate`: a new secret for a key. */
function registerKeyRotate(key: Command, io: CliIo): void {
  key
    .command('rotate')
    .description('issue a new secret; the old one stops working at once')
    .argument('<keyId>')
    .action(async (id: string, _options, command: Command) => {
      await withStore(command, io, async (store, ctx, gateway) => {
        const { secret } = await gateway.rotateKey(store, id);
        if (ctx.json) return printJson(io, { id, secret });
        io.stdout(
          `rotated ${id}\n  secret  ${secret}\nThe secret is shown only now: store it safely.\n`,
        );
      });
    });
}

/** `svc gateway key revoke`: revokes a key. */
function registerKeyRevoke(key: Command, io: CliIo): void {
  key
    .command('revoke')
    .description('revoke a key; applies to the running gateway on the next request')
    .argument('<keyId>')
    .action(async (id: string, _options, command: Command) => {
      await withStore(command, io, async (store, ctx) => {
        await requireKey(store, id);
        const revoked = await store.revokeKey(id, Date.now());
        if (ctx.json) return printJson(io, { id, revoked });
        io.stdout(revoked ? `revoked ${id}\n` : `${id} was already revoked\n`);
      });
    });
}

/** `svc gateway key topup on|off`: x402 top-ups of a key with its own wallet. */
function registerKeyTopup(key: Command, io: CliIo): void {
  key
    .command('topup')
    .description('enable or disable x402 top-ups (keys with their own wallet only)')
    .argument('<keyId>')
    .argument('<state>', 'on or off')
    .action(async (id: string, state: string, _options, command: Command) => {
      if (state !== 'on' && state !== 'off') throw usageError('state must be "on" or "off"');
      await withStore(command, io, async (store, ctx) => {
        const record = await requireKey(store, id);
        if (!record.ownIdentity && state === 'on') throw new SvcError('topup_not_available');
        await store.setKeyTopup(id, state === 'on');
        if (ctx.json) return printJson(io, { id, topupEnabled: state === 'on' });
        io.stdout(`top-ups ${state} for ${id}\n`);
      });
    });
}
