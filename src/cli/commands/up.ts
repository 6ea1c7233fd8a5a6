/** `svc up`, `svc down`, `svc status`: run the whole network locally. */
import type { Command } from 'commander';
import { DEFAULT_DEV_PORTS, devnetStatus, startDevnet, stopDevnet } from '../../devnet/index.js';
import { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import type { CliIo } from '../io.js';
import { parseIntOption, parsePort } from '../options.js';
import { printJson, printTable } from '../output.js';
import { waitForShutdown } from '../shutdown.js';

function port(value: string): number {
  return parsePort(value, 'port', 1);
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
    .option('--buyer-port <port>', 'buyer proxy port', port, DEFAULT_DEV_PORTS.buyer)
    .option('--gateway-port <port>', 'gateway port', port, DEFAULT_DEV_PORTS.gateway)
    .option('--chain-port <port>', 'anvil RPC port', port, DEFAULT_DEV_PORTS.chain)
    .option('--bootstrap-port <port>', 'bootstrap node TCP port', port, DEFAULT_DEV_PORTS.bootstrap)
    .option(
      '--facilitator-port <port>',
      'local x402 facilitator port',
      port,
      DEFAULT_DEV_PORTS.facilitator,
    )
    .option('--indexer-port <port>', 'indexer (GET /stats) port', port, DEFAULT_DEV_PORTS.indexer)
    .addHelpText(
      'after',
      '\nState lives in <data-dir>/dev/: a second `svc up` resumes with the same keys and balances.\nSellers for OpenAI / Anthropic join too when OPENAI_API_KEY / ANTHROPIC_API_KEY are set.\nExamples:\n  svc up\n  svc up --sellers 5 --fresh\n  svc up --detach && svc status && svc down',
    )
    .action(async (flags: UpFlags, command: Command) => {
      const ctx = CliContext.of(command, io);
      const print = (line: string) => io.stdout(`${line}\n`);
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
