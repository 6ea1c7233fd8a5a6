/**
 * `svc chain start|faucet|deploy|verify`: the local development chain (anvil + contracts) and its
 * faucet, and the payments contract on Base.
 */
import type { Command } from 'commander';
import { SvcError } from '../../errors/index.js';
import { formatUsd, parseUsd } from '../../money/index.js';
import { CliContext } from '../context.js';
import { DEPLOY_ETH_USD } from '../defaults.js';
import type { CliIo } from '../io.js';
import { parseIntOption, parsePort } from '../options.js';
import { printJson } from '../output.js';
import { waitForShutdown } from '../shutdown.js';
import type { DeployFlags } from './chainDeploy.js';
import type { VerifyFlags } from './chainVerify.js';

export function registerChainCommands(program: Command, io: CliIo): void {
  const chain = program
    .command('chain')
    .description(
      'the local development chain (anvil) with test USDC; the payments contract on Base',
    );
  registerChainStart(chain, io);
  registerChainFaucet(chain, io);
  registerChainDeploy(chain, io);
  registerChainVerify(chain, io);
}

/** Registers `svc chain start`. */
function registerChainStart(chain: Command, io: CliIo): void {
  chain
    .command('start')
    .description('start anvil, deploy test USDC and the payments contract, run until Ctrl-C')
    .option('--port <port>', 'RPC port on 127.0.0.1 (0 picks a free one)', '8545')
    .option('--state <file>', 'keep chain state in this file across restarts')
    .option(
      '--grace <seconds>',
      'grace period between a buyer close request and its reclaim',
      '3600',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  svc chain start\n  svc chain start --port 8546 --state ~/.svc/chain/anvil-state.json\n\nThe deployment is written to <data-dir>/chain/deployment.json, where buyers and sellers\nwith chain.network "local" find it.',
    )
    .action(async (options: { port: string; state?: string; grace: string }, command: Command) => {
      const ctx = CliContext.of(command, io);
      const { startLocalChain } = await import('../../chain/index.js');
      const local = await startLocalChain({
        port: parsePort(options.port),
        stateFile: options.state,
        dataDir: ctx.dataDir,
        gracePeriodSeconds: parseIntOption(options.grace, '--grace', 0),
      });
      try {
        const { deployment } = local;
        if (ctx.json) printJson(io, deployment);
        else {
          io.stdout(
            `local chain running\n  rpc       ${local.rpcUrl}\n  chain id  ${deployment.chainId}\n  usdc      ${deployment.usdcAddress}\n  payments  ${deployment.paymentsAddress}\n  grace     ${deployment.gracePeriodSeconds} s\n`,
          );
          io.stdout(
            'get test funds: svc chain faucet <address> --usdc 10 --eth 1\npress Ctrl-C to stop\n',
          );
        }
        await waitForShutdown();
      } finally {
        await local.stop();
      }
    });
}

/** Registers `svc chain faucet`. */
function registerChainFaucet(chain: Command, io: CliIo): void {
  chain
    .command('faucet')
    .description('mint test USDC and send test ETH (gas) to an address on the local chain')
    .argument('<address>', 'wallet address (0x...) or peer id')
    .option('--usdc <amount>', 'USDC to mint, e.g. 10 or 2.5', '0')
    .option('--eth <amount>', 'ETH to send for gas, e.g. 1', '0')
    .addHelpText('after', '\nExamples:\n  svc chain faucet 0xabc...123 --usdc 10 --eth 1')
    .action(
      async (addressText: string, options: { usdc: string; eth: string }, command: Command) => {
        const ctx = CliContext.of(command, io);
        const [{ connectChain, readDeployment, runFaucet }, { formatEther, parseEther }] =
          await Promise.all([import('../../chain/index.js'), import('viem')]);
        const address = await parseAddressArgument(addressText);
        const config = ctx.loadConfig().config.chain;
        if (config.network !== 'local') {
          throw new SvcError('invalid_argument', {
            message: `The faucet only works on the local chain; chain.network is "${config.network}".`,
          });
        }
        const deployment = readDeployment(ctx.dataDir);
        if (!deployment) {
          throw new SvcError('chain_unavailable', {
            message: 'No local chain deployment found: start one with `svc chain start`.',
          });
        }
        let usdcMicro: bigint;
        let ethWei: bigint;
        try {
          usdcMicro = parseUsd(options.usdc);
          ethWei = parseEther(options.eth);
        } catch (error) {
          throw new SvcError('invalid_argument', {
            message: `Invalid amount: ${(error as Error).message}`,
          });
        }
        const connected = connectChain(config, ctx.dataDir);
        try {
          await runFaucet(connected.clients, deployment, address, { usdcMicro, ethWei });
        } catch (error) {
          throw new SvcError('chain_unavailable', {
            message: `The faucet failed: chain unreachable at ${connected.rpcUrl}? (${(error as Error).message.split('\n')[0]})`,
            cause: error,
          });
        }
        const result = { address, usdc: formatUsd(usdcMicro), eth: formatEther(ethWei) };
        if (ctx.json) printJson(io, result);
        else io.stdout(`sent ${result.usdc} USDC and ${result.eth} ETH to ${address}\n`);
      },
    );
}

/** Accepts a 0x address or a peer id (see chainAddress.ts). */
async function parseAddressArgument(text: string) {
  return (await import('./chainAddress.js')).parseAddressArgument(text);
}

/** Registers `svc chain deploy`. */
function registerChainDeploy(chain: Command, io: CliIo): void {
  chain
    .command('deploy')
    .description(
      "deploy the payments contract to Base or Base Sepolia against Circle's USDC (never a test token)",
    )
    .requiredOption('--network <network>', 'base-sepolia, base, or an RPC URL of either')
    .requiredOption('--identity <name>', 'identity whose wallet deploys and pays the gas')
    .option('--usdc <address>', "USDC token address (default: Circle's USDC on that network)")
    .option('--dry-run', 'print the transaction and its cost; send nothing')
    .option('--confirmations <n>', 'blocks to wait for after the deployment block', '2')
    .option('--eth-usd <price>', 'ETH price in USD that costs are shown at', DEPLOY_ETH_USD)
    .addHelpText(
      'after',
      '\nExamples:\n  svc chain deploy --network base-sepolia --identity deployer --dry-run\n  svc chain deploy --network base-sepolia --identity deployer\n  svc chain deploy --network https://base-sepolia.example/rpc --identity deployer --eth-usd 2500\n\nThe deployed code is checked against this version before anything is written; the\ndeployment goes to <data-dir>/chain/<network>/deployment.json, and the command prints the\n`svc config set` lines for buyers and sellers. Then check it any time with `svc chain verify`.',
    )
    .action(async (flags: DeployFlags, command: Command) => {
      const { runDeploy } = await import('./chainDeploy.js');
      await runDeploy(CliContext.of(command, io), io, flags);
    });
}

/** Registers `svc chain verify`. */
function registerChainVerify(chain: Command, io: CliIo): void {
  chain
    .command('verify')
    .description(
      "check that a deployed contract is this version's SvcPayments: code, USDC, grace period, EIP-712 domain",
    )
    .argument('<address>', 'the payments contract address (0x...)')
    .option(
      '--network <network>',
      'base-sepolia, base, or an RPC URL of either (default: the configured chain)',
    )
    .option('--usdc <address>', "the USDC it must use (default: Circle's, or chain.usdcAddress)")
    .addHelpText(
      'after',
      "\nExamples:\n  svc chain verify 0xabc...123 --network base-sepolia\n  svc chain verify 0xabc...123            # against the configured chain\n\nExits 1 naming what differs. Buyers and sellers run the same check when they start and\nrefuse to start against a contract that is not this version's.",
    )
    .action(async (addressText: string, flags: VerifyFlags, command: Command) => {
      const { runVerify } = await import('./chainVerify.js');
      await runVerify(CliContext.of(command, io), io, addressText, flags);
    });
}
