/** `svc x402 facilitator|pay-topup`: the local x402 facilitator and paying a key top-up. */
import type { Command } from 'commander';
import { CliContext } from '../context.js';
import { DEFAULT_IDENTITY_NAME, FACILITATOR_PORT } from '../defaults.js';
import type { CliIo } from '../io.js';

export function registerX402Commands(program: Command, io: CliIo): void {
  const x402 = program
    .command('x402')
    .description('x402 v2 payments: the local facilitator and key top-ups');

  x402
    .command('facilitator')
    .description(
      'run an x402 facilitator (POST /verify, POST /settle, GET /supported) for one EVM chain',
    )
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--port <port>', `port (0 picks a free one)`, String(FACILITATOR_PORT))
    .option('--rpc-url <url>', 'chain RPC (default: the configured chain, else the local anvil)')
    .option(
      '--key-from <ref>',
      'env:<VARIABLE> or file:<path> holding the hex key that submits settlements (pays gas); default on a local chain: anvil dev account #1',
    )
    .addHelpText(
      'after',
      `\nThe gateway uses it with --x402-facilitator local (http://127.0.0.1:${FACILITATOR_PORT}).\nExamples:\n  svc x402 facilitator\n  svc x402 facilitator --rpc-url https://sepolia.base.org --key-from env:FACILITATOR_KEY --port 9402`,
    )
    .action(
      async (
        options: { host: string; port: string; rpcUrl?: string; keyFrom?: string },
        command: Command,
      ) => {
        const { runFacilitator } = await import('./x402Run.js');
        await runFacilitator(CliContext.of(command, io), io, options);
      },
    );

  x402
    .command('pay-topup')
    .description(
      'top up a gateway key with an x402 payment from one of your wallets (official x402 client)',
    )
    .argument('<amount>', 'USD amount, e.g. 5 or 12.50')
    .requiredOption('--key <secret>', 'the API key to fund (svc_...)')
    .option('--gateway-url <url>', 'gateway base URL (default: the configured gateway)')
    .option('--identity <name>', 'wallet that pays (needs USDC, no gas)', DEFAULT_IDENTITY_NAME)
    .addHelpText(
      'after',
      '\nThe gateway answers 402 with a PAYMENT-REQUIRED challenge; this signs an EIP-3009 authorization for\nexactly <amount> of the asset it names (spend controls refuse anything else) and retries.\nExamples:\n  svc x402 pay-topup 5 --key svc_abc...\n  svc x402 pay-topup 20 --key svc_abc... --identity team-a --gateway-url http://127.0.0.1:8379 --json',
    )
    .action(
      async (
        amount: string,
        options: { key: string; gatewayUrl?: string; identity: string },
        command: Command,
      ) => {
        const { runPayTopup } = await import('./x402Run.js');
        await runPayTopup(CliContext.of(command, io), io, amount, options);
      },
    );
}
