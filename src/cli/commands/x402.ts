/** `svc x402 facilitator|pay-topup`: the local x402 facilitator and paying a key top-up. */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { createPublicClient, type Hex, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { connectChain, LOCAL_RPC_URL } from '../../chain/index.js';
import { SvcError } from '../../errors/index.js';
import { DEFAULT_IDENTITY, parsePrivateKey, parseReference } from '../../identity/index.js';
import {
  createLocalFacilitator,
  LOCAL_FACILITATOR_PORT,
  payTopup,
  startFacilitatorServer,
} from '../../x402/index.js';
import { CliContext } from '../context.js';
import type { CliIo } from '../io.js';
import { parsePort } from '../options.js';
import { printJson } from '../output.js';
import { waitForShutdown } from '../shutdown.js';

/** Anvil's second well-known development key: pays the local facilitator's gas by default. */
const ANVIL_FACILITATOR_KEY: Hex =
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

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
    .option('--port <port>', `port (0 picks a free one)`, String(LOCAL_FACILITATOR_PORT))
    .option('--rpc-url <url>', 'chain RPC (default: the configured chain, else the local anvil)')
    .option(
      '--key-from <ref>',
      'env:<VARIABLE> or file:<path> holding the hex key that submits settlements (pays gas); default on a local chain: anvil dev account #1',
    )
    .addHelpText(
      'after',
      `\nThe gateway uses it with --x402-facilitator local (http://127.0.0.1:${LOCAL_FACILITATOR_PORT}).\nExamples:\n  svc x402 facilitator\n  svc x402 facilitator --rpc-url https://sepolia.base.org --key-from env:FACILITATOR_KEY --port 9402`,
    )
    .action(
      async (
        options: { host: string; port: string; rpcUrl?: string; keyFrom?: string },
        command: Command,
      ) => {
        const ctx = CliContext.of(command, io);
        const config = ctx.loadConfig().config;
        const rpcUrl = options.rpcUrl ?? configuredRpcUrl(ctx);
        const privateKey = facilitatorKey(options.keyFrom, config.chain.network, io.env);
        const chainId = await createPublicClient({ transport: http(rpcUrl) })
          .getChainId()
          .catch((error: unknown) => {
            throw new SvcError('chain_unavailable', {
              message: `Cannot reach the chain RPC at ${rpcUrl}: start it with \`svc chain start\` or pass --rpc-url.`,
              cause: error,
            });
          });
        const local = createLocalFacilitator({ rpcUrl, chainId, privateKey });
        const server = await startFacilitatorServer({
          facilitator: local.facilitator,
          host: options.host,
          port: parsePort(options.port),
          logger: ctx.logger,
        });
        if (ctx.json)
          printJson(io, { url: server.url, network: local.network, signer: local.address, rpcUrl });
        else {
          io.stdout(
            `x402 facilitator listening on ${server.url}\n  network  ${local.network}\n  signer   ${local.address} (pays settlement gas)\n  rpc      ${rpcUrl}\n`,
          );
        }
        await waitForShutdown();
        await server.close();
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
    .option('--identity <name>', 'wallet that pays (needs USDC, no gas)', DEFAULT_IDENTITY)
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
        const ctx = CliContext.of(command, io);
        const gatewayUrl = options.gatewayUrl ?? configuredGatewayUrl(ctx);
        const identities = ctx.identities();
        const wallet =
          options.identity === DEFAULT_IDENTITY
            ? identities.loadDefault()
            : identities.load(options.identity);
        const result = await payTopup({
          gatewayUrl,
          apiKey: options.key,
          amountUsd: amount,
          account: wallet.account,
        });
        if (ctx.json) {
          printJson(io, {
            status: result.status,
            settle: result.settle ?? null,
            body: result.body,
          });
        } else if (result.status === 200) {
          io.stdout(
            `topped up ${amount} USD from ${wallet.account.address}\n  transaction  ${result.settle?.transaction ?? '?'}\n  network      ${result.settle?.network ?? '?'}\n`,
          );
        }
        if (result.status !== 200) {
          const message = (result.body as { error?: { message?: string } } | undefined)?.error
            ?.message;
          throw new SvcError('invalid_request', {
            message: `top-up refused (${result.status}): ${message ?? JSON.stringify(result.body)}`,
          });
        }
      },
    );
}

function configuredRpcUrl(ctx: CliContext): string {
  const config = ctx.loadConfig().config;
  try {
    return connectChain(config.chain, ctx.dataDir).rpcUrl;
  } catch {
    return config.chain.rpcUrl ?? LOCAL_RPC_URL;
  }
}

function configuredGatewayUrl(ctx: CliContext): string {
  const { host, port } = ctx.loadConfig().config.gateway;
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

function facilitatorKey(keyFrom: string | undefined, network: string, env: NodeJS.ProcessEnv): Hex {
  if (!keyFrom) {
    if (network !== 'local') {
      throw new SvcError('invalid_argument', {
        message: `On ${network} the facilitator needs a funded key: pass --key-from env:<VARIABLE> or file:<path>.`,
      });
    }
    return ANVIL_FACILITATOR_KEY;
  }
  const { source, reference } = parseReference(keyFrom);
  const where = reference.slice(source.length + 1);
  const text = source === 'env' ? env[where] : readKeyFile(where);
  if (!text) {
    throw new SvcError('invalid_argument', {
      message: `--key-from ${reference}: the variable is not set.`,
    });
  }
  try {
    const key = parsePrivateKey(text, reference);
    privateKeyToAccount(key);
    return key;
  } catch (error) {
    throw new SvcError('invalid_argument', { message: (error as Error).message });
  }
}

function readKeyFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    throw new SvcError('invalid_argument', {
      message: `--key-from file:${path}: cannot read the file.`,
    });
  }
}
