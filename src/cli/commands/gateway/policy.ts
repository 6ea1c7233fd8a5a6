/** `svc gateway policy set|show` per scope, and `svc gateway preset create|list|remove`. */
import type { Command } from 'commander';
import type { GatewayStore, RoutingPolicy } from '../../../gateway/index.js';
import { CliError, usageError } from '../../errors.js';
import type { CliIo } from '../../io.js';
import { printJson, printTable } from '../../output.js';
import { addPolicyOptions, type PolicyFlags, policyFromFlags } from './policyFlags.js';
import { type GatewayModule, withStore } from './shared.js';

interface ScopeFlags {
  workspace?: string;
  member?: string;
  key?: string;
}

interface Scope {
  label: string;
  read(): Promise<RoutingPolicy | null>;
  write(policy: RoutingPolicy | null): Promise<void>;
}

async function scopeOf(
  gateway: GatewayModule,
  store: GatewayStore,
  flags: ScopeFlags,
): Promise<Scope> {
  const given = [flags.workspace, flags.member, flags.key].filter(Boolean);
  if (given.length !== 1)
    throw usageError('give exactly one of --workspace <name>, --member <name>, --key <keyId>');
  if (flags.workspace) {
    const ws = await gateway.requireWorkspace(store, flags.workspace, Date.now());
    return {
      label: `workspace ${ws.name}`,
      read: async () => (await store.getWorkspace(ws.id))?.policy ?? null,
      write: (p) => store.setWorkspacePolicy(ws.id, p),
    };
  }
  if (flags.member) {
    const member = await store.findMemberByName(flags.member);
    if (!member) throw new CliError(`no member named "${flags.member}"`);
    return {
      label: `member ${member.name}`,
      read: async () => (await store.getMember(member.id))?.policy ?? null,
      write: (p) => store.setMemberPolicy(member.id, p),
    };
  }
  const key = await store.getKey(flags.key!);
  if (!key) throw new CliError(`no key ${flags.key}`);
  return {
    label: `key ${key.id}`,
    read: async () => (await store.getKey(key.id))?.policy ?? null,
    write: (p) => store.setKeyPolicy(key.id, p),
  };
}

function scopeOptions(command: Command): Command {
  return command
    .option('--workspace <name>', 'the policy of a workspace')
    .option('--member <name>', 'the policy of a member')
    .option('--key <keyId>', 'the policy of a key');
}

export function registerPolicyCommands(gateway: Command, io: CliIo): void {
  const policy = gateway
    .command('policy')
    .description('routing policies; each level (workspace, member, key, preset) only narrows');

  addPolicyOptions(
    scopeOptions(
      policy
        .command('set')
        .description('replace the policy of one scope')
        .option('--clear', 'remove the policy'),
    ),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  svc gateway policy set --workspace Default --min-trust 70 --max-output-price 15\n  svc gateway policy set --key key_abc --models gpt-4o --block-sellers 0xabc...',
    )
    .action(async (flags: ScopeFlags & PolicyFlags & { clear?: boolean }, command: Command) => {
      await withStore(command, io, async (store, ctx, gateway) => {
        const scope = await scopeOf(gateway, store, flags);
        const next = flags.clear ? null : policyFromFlags(gateway, flags);
        await scope.write(next);
        if (ctx.json) return printJson(io, { scope: scope.label, policy: next });
        io.stdout(`policy of ${scope.label}: ${next ? JSON.stringify(next) : 'none'}\n`);
      });
    });

  scopeOptions(policy.command('show').description('show the policy of one scope')).action(
    async (flags: ScopeFlags, command: Command) => {
      await withStore(command, io, async (store, ctx, gateway) => {
        const scope = await scopeOf(gateway, store, flags);
        const current = await scope.read();
        if (ctx.json) return printJson(io, { scope: scope.label, policy: current });
        io.stdout(
          `policy of ${scope.label}: ${current ? JSON.stringify(current, null, 2) : 'none'}\n`,
        );
      });
    },
  );

  const preset = gateway
    .command('preset')
    .description('named policies used as model "@preset/<name>"');

  addPolicyOptions(
    preset
      .command('create')
      .description('create or replace a preset')
      .argument('<name>')
      .option('--workspace <name>', 'owned by this workspace (default: the organisation)')
      .option('--model <model>', 'model the preset routes to'),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  svc gateway preset create fast --model claude-haiku-4 --min-trust 80',
    )
    .action(
      async (
        name: string,
        flags: PolicyFlags & { workspace?: string; model?: string },
        command: Command,
      ) => {
        if (!/^[A-Za-z0-9._-]+$/.test(name))
          throw usageError('preset names use letters, digits, ".", "_" and "-"');
        await withStore(command, io, async (store, ctx, gateway) => {
          const owner = flags.workspace
            ? (await gateway.requireWorkspace(store, flags.workspace, Date.now())).id
            : '';
          const record = {
            name,
            owner,
            model: flags.model ?? null,
            policy: policyFromFlags(gateway, flags),
            createdAt: Date.now(),
          };
          await store.upsertPreset(record);
          if (ctx.json) return printJson(io, record);
          io.stdout(
            `preset @preset/${name} saved (${owner ? `workspace ${flags.workspace}` : 'organisation'})\n`,
          );
        });
      },
    );

  preset
    .command('list')
    .description('list presets')
    .action(async (_options, command: Command) => {
      await withStore(command, io, async (store, ctx) => {
        const presets = await store.listPresets();
        if (ctx.json) return printJson(io, presets);
        printTable(
          io,
          ['NAME', 'OWNER', 'MODEL', 'POLICY'],
          presets.map((p) => [
            p.name,
            p.owner || 'organisation',
            p.model ?? '-',
            JSON.stringify(p.policy),
          ]),
        );
      });
    });

  preset
    .command('remove')
    .description('remove a preset')
    .argument('<name>')
    .option('--workspace <name>', 'the workspace owning it')
    .action(async (name: string, flags: { workspace?: string }, command: Command) => {
      await withStore(command, io, async (store, ctx, gateway) => {
        const owner = flags.workspace
          ? (await gateway.requireWorkspace(store, flags.workspace, Date.now())).id
          : '';
        const removed = await store.removePreset(name, owner);
        if (!removed) throw new CliError(`no preset named "${name}"`);
        if (ctx.json) return printJson(io, { name, removed });
        io.stdout(`removed preset ${name}\n`);
      });
    });
}
