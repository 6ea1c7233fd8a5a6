/** `svc buyer connection set|clear|show`: the session pin, which survives restarts. */
import type { Command } from 'commander';
import { SvcError } from '../../../errors/index.js';
import { CliContext } from '../../context.js';
import type { CliIo } from '../../io.js';
import { printJson } from '../../output.js';

/** The routing folder, loaded by the command that runs (decision 215). */
const loadRouting = () => import('../../../routing/index.js');

export function registerConnectionCommands(buyer: Command, io: CliIo): void {
  const connection = buyer
    .command('connection')
    .description(
      'session pin: send every request to one seller (x-svc-pin-peer and <peer>@<service> still win)',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  svc buyer connection set --peer 0x1234567890abcdef1234567890abcdef12345678\n  svc buyer connection show\n  svc buyer connection clear',
    );

  connection
    .command('set')
    .description('pin requests to one seller until cleared (kept across restarts)')
    .requiredOption('--peer <peer_id>', 'seller peer id: 40 hex characters, with or without 0x')
    .action(async (options: { peer: string }, command: Command) => {
      const ctx = CliContext.of(command, io);
      const [{ isPeerId, parsePeerId }, { RouteStateStore }] = await Promise.all([
        import('../../../identity/index.js'),
        loadRouting(),
      ]);
      if (!isPeerId(options.peer.trim())) {
        throw new SvcError('invalid_argument', {
          message: `"${options.peer}" is not a peer id: expected 40 hex characters, with or without 0x. Run \`svc network browse\` to find one.`,
        });
      }
      const peerId = parsePeerId(options.peer);
      new RouteStateStore(ctx.dataDir).update((state) => ({ ...state, sessionPin: peerId }));
      if (ctx.json) printJson(io, { sessionPin: peerId });
      else io.stdout(`requests are now pinned to ${peerId}\n`);
    });

  connection
    .command('clear')
    .description('remove the session pin (automatic routing again)')
    .action(async (_options, command: Command) => {
      const ctx = CliContext.of(command, io);
      const { RouteStateStore } = await loadRouting();
      new RouteStateStore(ctx.dataDir).update(({ sessionPin: _, ...rest }) => rest);
      if (ctx.json) printJson(io, { sessionPin: null });
      else io.stdout('session pin cleared; requests are routed automatically\n');
    });

  connection
    .command('show')
    .description('print the session pin')
    .action(async (_options, command: Command) => {
      const ctx = CliContext.of(command, io);
      const { RouteStateStore } = await loadRouting();
      const { sessionPin } = new RouteStateStore(ctx.dataDir).read();
      if (ctx.json) printJson(io, { sessionPin: sessionPin ?? null });
      else
        io.stdout(
          `${sessionPin ? `pinned to ${sessionPin}` : 'no session pin (automatic routing)'}\n`,
        );
    });
}
