/** `svc gateway workspace create|list|limits`: each workspace pays from exactly one identity. */
import type { Command } from 'commander';
import { LIMIT_PERIODS } from '../../defaults.js';
import type { CliIo } from '../../io.js';
import { printJson, printTable } from '../../output.js';
import { addLimitOptions, limitsFromOptions, limitsJson, limitText, withStore } from './shared.js';

export function registerWorkspaceCommands(gateway: Command, io: CliIo): void {
  const workspace = gateway
    .command('workspace')
    .description('workspaces: who pays, and their budgets');
  registerWorkspaceCreate(workspace, io);
  registerWorkspaceList(workspace, io);
  registerWorkspaceLimits(workspace, io);
}

/** Registers `svc gateway workspace create`. */
function registerWorkspaceCreate(workspace: Command, io: CliIo): void {
  workspace
    .command('create')
    .description('create a workspace paying from one identity')
    .argument('<name>')
    .option('--identity <name>', 'an existing identity to pay from')
    .option('--new-identity', 'create a new identity named after the workspace')
    .addHelpText(
      'after',
      '\nExamples:\n  svc gateway workspace create research --new-identity\n  svc gateway workspace create ops --identity ops-wallet',
    )
    .action(
      async (
        name: string,
        options: { identity?: string; newIdentity?: boolean },
        command: Command,
      ) => {
        await withStore(command, io, async (store, ctx, gateway) => {
          const created = await gateway.createNamedWorkspace(
            store,
            await ctx.identities(),
            { name, identity: options.identity, newIdentity: options.newIdentity },
            Date.now(),
          );
          const identity = created.identity;
          if (ctx.json) return printJson(io, { ...created, limits: limitsJson(created.limits) });
          io.stdout(
            `created workspace ${created.name} (${created.id}) paying from identity ${identity}\n`,
          );
        });
      },
    );
}

/** Registers `svc gateway workspace list`. */
function registerWorkspaceList(workspace: Command, io: CliIo): void {
  workspace
    .command('list')
    .description('list workspaces')
    .action(async (_options, command: Command) => {
      await withStore(command, io, async (store, ctx, gateway) => {
        await gateway.defaultWorkspace(store, Date.now());
        const all = await store.listWorkspaces();
        if (ctx.json)
          return printJson(
            io,
            all.map((w) => ({
              ...w,
              limits: limitsJson(w.limits),
              createdAt: new Date(w.createdAt).toISOString(),
            })),
          );
        printTable(
          io,
          ['NAME', 'ID', 'IDENTITY', 'DAILY', 'WEEKLY', 'MONTHLY', 'TOTAL'],
          all.map((w) => [
            w.name,
            w.id,
            w.identity,
            ...LIMIT_PERIODS.map((p) => limitText(w.limits[p])),
          ]),
        );
      });
    });
}

/** Registers `svc gateway workspace limits`. */
function registerWorkspaceLimits(workspace: Command, io: CliIo): void {
  addLimitOptions(
    workspace.command('limits').description("set a workspace's budgets").argument('<name>'),
  )
    .addHelpText('after', '\nExamples:\n  svc gateway workspace limits Default --monthly-limit 100')
    .action(async (name: string, options: Record<string, unknown>, command: Command) => {
      await withStore(command, io, async (store, ctx, gateway) => {
        const found = await gateway.requireWorkspace(store, name, Date.now());
        const limits = limitsFromOptions(gateway, options);
        await store.setWorkspaceLimits(found.id, limits);
        const updated = (await store.getWorkspace(found.id))!;
        if (ctx.json) return printJson(io, { name, limits: limitsJson(updated.limits) });
        io.stdout(
          `limits of ${name}: ${LIMIT_PERIODS.map((p) => `${p} ${limitText(updated.limits[p])}`).join(', ')}\n`,
        );
      });
    });
}
