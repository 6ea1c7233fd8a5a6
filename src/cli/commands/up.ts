/** `svc up`, `svc down`, `svc status`: run the whole network locally. */
import { type Command, Option } from 'commander';
import type { DevPorts, startDevnet } from '../../devnet/index.js';
import { CliContext } from '../context.js';
import { UP_PORTS } from '../defaults.js';
import { CliError } from '../errors.js';
import type { CliIo } from '../io.js';
import { parseIntOption, parsePort } from '../options.js';
import { printJson, printTable } from '../output.js';
import { waitForShutdown } from '../shutdown.js';

/** The devnet folder, loaded by the command that runs (see defaults.ts). */
const loadDevnet = () => import('../../devnet/index.js');

function port(value: string): number {
  return parsePort(value, 'port', 1);
}

/**
 * A port flag of `svc up`, also read from `variable` so a whole session (a script, a test) can
 * move the network off the default ports without changing the commands it types. The buyer's and
 * the gateway's variables are the ones their own config honours (docs/guide/configuration.md).
 */
function portOption(
  flag: string,
  description: string,
  component: keyof DevPorts,
  variable: string,
): Option {
  return new Option(`${flag} <port>`, description)
    .argParser(port)
    .env(variable)
    .default(UP_PORTS[component]);
}

function count(value: string): number {
  return parseIntOption(value, '--sellers', 1, 20);
}

interface UpFlags {
  sellers: number;
  substitute?: boolean;
  fresh?: boolean;
  detach?: boolean;
  buyerPort: number;
  gatewayPort: number;
  chainPort: number;
  bootstrapPort: number;
  facilitatorPort: number;
  indexerPort: number;
}

export function registerUpCommands(program: Command, io: CliIo): void {
  registerUpUp(program, io);
  registerUpDown(program, io);
  registerUpStatus(program, io);
}

/** Registers `svc up`. */
function registerUpUp(program: Command, io: CliIo): void {
  program
    .command('up')
    .description('run the whole network locally: chain, bootstrap, sellers, buyer, gateway')
    .option('--sellers <n>', 'demo sellers to start (1..20)', count, 3)
    .option(
      '--substitute',
      'also start a seller announcing svc-demo-smart but serving svc-demo-fast, and audit every answer',
    )
    .option('--fresh', 'wipe <data-dir>/dev first (new keys, new chain)')
    .option('--detach', 'return once ready and leave it running (stop with `svc down`)')
    .addOption(portOption('--buyer-port', 'buyer proxy port', 'buyer', 'SVC_BUYER_PORT'))
    .addOption(portOption('--gateway-port', 'gateway port', 'gateway', 'SVC_GATEWAY_PORT'))
    .addOption(portOption('--chain-port', 'anvil RPC port', 'chain', 'SVC_CHAIN_PORT'))
    .addOption(
      portOption('--bootstrap-port', 'bootstrap node TCP port', 'bootstrap', 'SVC_BOOTSTRAP_PORT'),
    )
    .addOption(
      portOption(
        '--facilitator-port',
        'local x402 facilitator port',
        'facilitator',
        'SVC_FACILITATOR_PORT',
      ),
    )
    .addOption(
      portOption('--indexer-port', 'indexer (GET /stats) port', 'indexer', 'SVC_INDEXER_PORT'),
    )
    .addHelpText(
      'after',
      '\nState lives in <data-dir>/dev/: a second `svc up` resumes with the same keys and balances.\nSellers for OpenAI / Anthropic join too when OPENAI_API_KEY / ANTHROPIC_API_KEY are set.\nExamples:\n  svc up\n  svc up --sellers 5 --fresh\n  svc up --detach && svc status && svc down',
    )
    .action(async (flags: UpFlags, command: Command) => {
      const ctx = CliContext.of(command, io);
      const print = (line: string) => io.stdout(`${line}\n`);
      const { startDevnet } = await loadDevnet();
      let network: Awaited<ReturnType<typeof startDevnet>>;
      try {
        network = await startDevnet({
          dataDir: ctx.dataDir,
          sellers: flags.sellers,
          fresh: Boolean(flags.fresh),
          detach: Boolean(flags.detach),
          ports: {
            buyer: flags.buyerPort,
            gateway: flags.gatewayPort,
            chain: flags.chainPort,
            bootstrap: flags.bootstrapPort,
            facilitator: flags.facilitatorPort,
            indexer: flags.indexerPort,
          },
          env: io.env,
          print,
          substitute: Boolean(flags.substitute),
        });
      } catch (error) {
        throw new CliError((error as Error).message);
      }
      if (flags.detach) return;
      await waitForShutdown();
      await network.stop();
    });
}

/** Registers `svc down`. */
function registerUpDown(program: Command, io: CliIo): void {
  program
    .command('down')
    .description('stop a local network started by `svc up` (in reverse order)')
    .action(async (_options, command: Command) => {
      const ctx = CliContext.of(command, io);
      // With --json, stdout is the JSON alone.
      const print = ctx.json ? () => {} : (line: string) => io.stdout(`${line}\n`);
      const { stopDevnet } = await loadDevnet();
      const stopped = await stopDevnet(ctx.dataDir, print);
      if (ctx.json) printJson(io, { stopped });
      else io.stdout(stopped.length ? 'local network stopped\n' : 'no local network is running\n');
    });
}

/** Registers `svc status`. */
function registerUpStatus(program: Command, io: CliIo): void {
  program
    .command('status')
    .description('show what `svc up` runs: each component, its pid and health')
    .action(async (_options, command: Command) => {
      const ctx = CliContext.of(command, io);
      const { devnetStatus } = await loadDevnet();
      const status = await devnetStatus(ctx.dataDir);
      if (ctx.json) return printJson(io, status);
      if (!status.state)
        return void io.stdout('no local network is running (start one with `svc up`)\n');
      printTable(
        io,
        ['COMPONENT', 'PID', 'STATE', 'ADDRESS'],
        status.components.map((c) => [
          c.name,
          String(c.pid),
          c.alive ? 'running' : 'exited',
          c.url ?? '',
        ]),
      );
      io.stdout(
        `buyer ${status.buyerHealthy ? 'healthy' : 'not answering'} at ${status.state.buyerUrl}; gateway ${status.gatewayHealthy ? 'healthy' : 'not answering'} at ${status.state.gatewayUrl}\n`,
      );
    });
}
