/** `svc buyer route set|clear|show`: the default route that model "svc" follows. */
import type { Command } from 'commander';
import { SvcError } from '../../../errors/index.js';
import { CliContext } from '../../context.js';
import type { CliIo } from '../../io.js';
import { printJson } from '../../output.js';

/** The routing folder, loaded by the command that runs (decision 215). */
const loadRouting = () => import('../../../routing/index.js');

export function registerRouteCommands(buyer: Command, io: CliIo): void {
  const route = buyer
    .command('route')
    .description(
      'the default route: requests with model "svc" go here (headless desktop selection)',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  svc buyer route set claude-sonnet-4\n  svc buyer route set 0x1234...abcd@claude-sonnet-4-20250514\n  svc buyer route show --json\n  svc buyer route clear',
    );

  route
    .command('set')
    .description('set the default route to a model (automatic routing) or <peer_id>@<service_id>')
    .argument('<target>', 'model name, or <peer_id>@<service_id> to pin one seller')
    .action(async (target: string, _options, command: Command) => {
      const ctx = CliContext.of(command, io);
      const { DEFAULT_ROUTE_MODEL, parsePinnedModel, RouteStateStore } = await loadRouting();
      const value = target.trim();
      if (!value || value === DEFAULT_ROUTE_MODEL) {
        throw new SvcError('invalid_argument', {
          message: `The default route must name a model or <peer_id>@<service_id>, not "${target}".`,
        });
      }
      if (value.includes('@') && !value.startsWith('@preset/') && !parsePinnedModel(value)) {
        throw new SvcError('invalid_argument', {
          message: `"${value}" is not <peer_id>@<service_id> (peer id: 40 hex characters, with or without 0x).`,
        });
      }
      const pinned = parsePinnedModel(value);
      const stored = pinned ? `${pinned.peerId}@${pinned.serviceId}` : value;
      const store = new RouteStateStore(ctx.dataDir);
      store.update((state) => ({ ...state, defaultRoute: stored }));
      if (ctx.json) printJson(io, { defaultRoute: stored });
      else io.stdout(`default route: ${stored}\nrequests with model "svc" now go there\n`);
    });

  route
    .command('clear')
    .description('remove the default route (model "svc" then answers 400 no_default_route)')
    .action(async (_options, command: Command) => {
      const ctx = CliContext.of(command, io);
      const { RouteStateStore } = await loadRouting();
      new RouteStateStore(ctx.dataDir).update(({ defaultRoute: _, ...rest }) => rest);
      if (ctx.json) printJson(io, { defaultRoute: null });
      else io.stdout('default route cleared\n');
    });

  route
    .command('show')
    .description('print the default route')
    .action(async (_options, command: Command) => {
      const ctx = CliContext.of(command, io);
      const { RouteStateStore } = await loadRouting();
      const { defaultRoute } = new RouteStateStore(ctx.dataDir).read();
      if (ctx.json) printJson(io, { defaultRoute: defaultRoute ?? null });
      else
        io.stdout(`${defaultRoute ? `default route: ${defaultRoute}` : 'no default route set'}\n`);
    });
}
