/** `svc gateway member add|list|disable|limits`: members, roles, key quotas and member budgets. */
import type { Command } from 'commander';
import type { GatewayStore, MemberRecord } from '../../../gateway/index.js';
import { LIMIT_PERIODS } from '../../defaults.js';
import { CliError } from '../../errors.js';
import type { CliIo } from '../../io.js';
import { printJson, printTable } from '../../output.js';
import { addLimitOptions, limitsFromOptions, limitsJson, limitText, withStore } from './shared.js';

async function requireMember(store: GatewayStore, name: string): Promise<MemberRecord> {
  const member = await store.findMemberByName(name);
  if (!member)
    throw new CliError(`no member named "${name}"; list them with \`svc gateway member list\``);
  return member;
}

export function registerMemberCommands(gateway: Command, io: CliIo): void {
  const member = gateway
    .command('member')
    .description('members of workspaces, their roles, key quotas and budgets');
  registerMemberAdd(member, io);
  registerMemberList(member, io);
  registerMemberDisable(member, io);
  registerMemberLimits(member, io);
}

/** Registers `svc gateway member add`. */
function registerMemberAdd(member: Command, io: CliIo): void {
  member
    .command('add')
    .description('add a member to a workspace (creating the member when new)')
    .argument('<name>')
    .option('--workspace <name>', 'workspace to join', 'Default')
    .option('--role <role>', 'admin or member', 'member')
    .option('--org-role <role>', 'organisation role: owner, admin or none')
    .option('--key-quota <n>', 'how many active keys the member may own ("none" = unlimited)')
    .addHelpText(
      'after',
      '\nExamples:\n  svc gateway member add ann --workspace research --role admin --key-quota 5',
    )
    .action(
      async (
        name: string,
        options: { workspace: string; role: string; orgRole?: string; keyQuota?: string },
        command: Command,
      ) => {
        await withStore(command, io, async (store, ctx, gateway) => {
          const updated = await gateway.addMember(
            store,
            {
              name,
              workspace: options.workspace,
              role: options.role,
              orgRole: options.orgRole,
              keyQuota:
                options.keyQuota === undefined
                  ? undefined
                  : gateway.parseCount('--key-quota', options.keyQuota),
            },
            Date.now(),
          );
          if (ctx.json) return printJson(io, { ...updated, limits: limitsJson(updated.limits) });
          io.stdout(`${name} is ${options.role} of ${options.workspace}\n`);
        });
      },
    );
}

/** Registers `svc gateway member list`. */
function registerMemberList(member: Command, io: CliIo): void {
  member
    .command('list')
    .description('list members')
    .action(async (_options, command: Command) => {
      await withStore(command, io, async (store, ctx) => {
        const members = await store.listMembers();
        const names = new Map((await store.listWorkspaces()).map((w) => [w.id, w.name]));
        if (ctx.json)
          return printJson(
            io,
            members.map((m) => ({ ...m, limits: limitsJson(m.limits) })),
          );
        printTable(
          io,
          [
            'NAME',
            'ORG ROLE',
            'WORKSPACES',
            'KEY QUOTA',
            'STATE',
            'DAILY',
            'WEEKLY',
            'MONTHLY',
            'TOTAL',
          ],
          members.map((m) => [
            m.name,
            m.orgRole,
            m.workspaces
              .map((w) => `${names.get(w.workspaceId) ?? w.workspaceId}:${w.role}`)
              .join(','),
            m.keyQuota === null ? '-' : String(m.keyQuota),
            m.disabled ? 'disabled' : 'active',
            ...LIMIT_PERIODS.map((p) => limitText(m.limits[p])),
          ]),
        );
      });
    });
}

/** Registers `svc gateway member disable`. */
function registerMemberDisable(member: Command, io: CliIo): void {
  member
    .command('disable')
    .description('disable a member: their keys stop working on the next request')
    .argument('<name>')
    .action(async (name: string, _options, command: Command) => {
      await withStore(command, io, async (store, ctx) => {
        const record = await requireMember(store, name);
        await store.setMemberDisabled(record.id, true);
        if (ctx.json) return printJson(io, { name, disabled: true });
        io.stdout(`disabled ${name}\n`);
      });
    });
}

/** Registers `svc gateway member limits`. */
function registerMemberLimits(member: Command, io: CliIo): void {
  addLimitOptions(
    member
      .command('limits')
      .description("set a member's budgets and key quota")
      .argument('<name>')
      .option('--key-quota <n>', 'active keys allowed ("none" = unlimited)'),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  svc gateway member limits ann --weekly-limit 20 --key-quota 3',
    )
    .action(async (name: string, options: Record<string, unknown>, command: Command) => {
      await withStore(command, io, async (store, ctx, gateway) => {
        const record = await requireMember(store, name);
        await store.setMemberLimits(record.id, limitsFromOptions(gateway, options));
        if (typeof options.keyQuota === 'string')
          await store.setMemberQuota(
            record.id,
            gateway.parseCount('--key-quota', options.keyQuota),
          );
        const updated = (await store.getMember(record.id))!;
        if (ctx.json)
          return printJson(io, {
            name,
            keyQuota: updated.keyQuota,
            limits: limitsJson(updated.limits),
          });
        io.stdout(
          `limits of ${name}: ${LIMIT_PERIODS.map((p) => `${p} ${limitText(updated.limits[p])}`).join(', ')}; key quota ${updated.keyQuota ?? '-'}\n`,
        );
      });
    });
}
