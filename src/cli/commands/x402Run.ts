/**
 * What `svc x402 facilitator|pay-topup` do: loaded when one of them runs (x402.ts registers them;
 * docs/decisions/215-commands-load-their-code-when-they-run.md).
 */
import { readFileSync } from 'node:fs';
import { createPublicClient, type Hex, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { connectChain, LOCAL_RPC_URL } from '../../chain/index.js';
import { SvcError } from '../../errors/index.js';
import { DEFAULT_IDENTITY, parsePrivateKey, parseReference } from '../../identity/index.js';
import { createLocalFacilitator, payTopup, startFacilitatorServer } from '../../x402/index.js';
import type { CliContext } from '../context.js';
import type { CliIo } from '../io.js';
import { parsePort } from '../options.js';
import { printJson } from '../output.js';
import { waitForShutdown } from '../shutdown.js';

/** Anvil's second well-known development key: pays the local facilitator's gas by default. */
const ANVIL_FACILITATOR_KEY: Hex =
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

/** Runs `svc x402 facilitator` until Ctrl-C. */
export async function runFacilitator(
  ctx: CliContext,
  io: CliIo,
  options: { host: string; port: string; rpcUrl?: string; keyFrom?: string },
): Promise<void> {
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
}

/** Runs `svc x402 pay-topup`. */
export async function runPayTopup(
  ctx: CliContext,
  io: CliIo,
  amount: string,
  options: { key: string; gatewayUrl?: string; identity: string },
): Promise<void> {
  const gatewayUrl = options.gatewayUrl ?? configuredGatewayUrl(ctx);
  const identities = await ctx.identities();
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
    const message = (result.body as { error?: { message?: string } } | undefined)?.error?.message;
    throw new SvcError('invalid_request', {
      message: `top-up refused (${result.status}): ${message ?? JSON.stringify(result.body)}`,
    });
  }
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
