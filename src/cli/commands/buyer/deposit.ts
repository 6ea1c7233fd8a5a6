/** `svc buyer deposit`: where to send USDC, current wallet and credits, and an optional deposit now. */
import { createRequire } from 'node:module';
import type { Command } from 'commander';
import { SvcError } from '../../../errors/index.js';
import { silentLogger } from '../../../log/index.js';
import { formatUsd } from '../../../money/index.js';
import type { SweepPlan } from '../../../payments/index.js';
import { CliContext } from '../../context.js';
import { DEFAULT_IDENTITY_NAME } from '../../defaults.js';
import type { CliIo } from '../../io.js';
import { printJson } from '../../output.js';

interface QrTerminal {
  generate(text: string, options: { small: boolean }, callback: (qr: string) => void): void;
}

/** Who pays the gas of the next deposit of this wallet, for `--json` and the text view. */
interface DepositGasView {
  payer: 'self' | 'relayer' | 'none';
  relayerIdentity: string;
  relayerAddress?: string;
  /** Set when payer is "none": send ETH here. */
  fundAddress?: string;
  message?: string;
}

function gasView(plan: SweepPlan | undefined, relayerIdentity: string): DepositGasView | undefined {
  const gas = plan?.gas;
  if (!gas) return undefined;
  if (gas.kind === 'self') return { payer: 'self', relayerIdentity };
  if (gas.kind === 'relayer')
    return { payer: 'relayer', relayerIdentity: gas.identity, relayerAddress: gas.address };
  return { payer: 'none', relayerIdentity, fundAddress: gas.fundAddress, message: gas.message };
}

function qrCode(text: string): string {
  const qrcode = createRequire(import.meta.url)('qrcode-terminal') as QrTerminal;
  let out = '';
  qrcode.generate(text, { small: true }, (qr) => {
    out = qr;
  });
  return out;
}

export function registerDepositCommand(buyer: Command, io: CliIo): void {
  buyer
    .command('deposit')
    .description('show the address to fund with USDC, the wallet balance and deposited credits')
    .option('--identity <name>', 'which wallet to fund', DEFAULT_IDENTITY_NAME)
    .option('--qr', 'print the QR code even when output is not a terminal')
    .option(
      '--now',
      'deposit the wallet USDC into credits now (the running buyer does it within a minute)',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  svc buyer deposit\n  svc buyer deposit --identity team-a --json\n  svc buyer deposit --now\n\nSend USDC (on the configured chain) to the address; the running buyer moves it into\ncredits within a minute. The wallet needs no ETH: when it has none, the relayer identity\n(chain.payments.relayerIdentity, default "default") pays the gas of the deposit.',
    )
    .action(
      async (options: { identity: string; now?: boolean; qr?: boolean }, command: Command) => {
        const ctx = CliContext.of(command, io);
        const identities = await ctx.identities();
        const identity = identities.load(options.identity);
        const [{ DepositSweeper }, { readBalance, tryConnect }] = await Promise.all([
          import('../../../payments/index.js'),
          import('./balances.js'),
        ]);
        const address = identity.account.address;
        const config = ctx.loadConfig().config.chain;
        const relayerIdentity = config.payments.relayerIdentity;
        const chain = tryConnect(ctx);
        let deposited: string | undefined;
        let gas: DepositGasView | undefined;
        if (!('error' in chain)) {
          // The same sweep the running buyer does (decision 080), for this identity only.
          const sweeper = new DepositSweeper({
            identities,
            contract: chain.contract,
            logger: silentLogger(),
            intervalMs: 0,
            relayerIdentity,
          });
          if (options.now) {
            const [result] = await sweeper.sweepOnce(options.identity);
            if (result?.error && result.fundAddress) {
              throw new SvcError('deposit_gas_unavailable', {
                message: result.error,
                details: { fundAddress: result.fundAddress, identity: options.identity },
              });
            }
            if (result?.error) throw new Error(result.error);
            if (result && result.depositedMicro > 0n) deposited = formatUsd(result.depositedMicro);
          }
          gas = gasView(
            await sweeper.plan(options.identity).catch(() => undefined),
            relayerIdentity,
          );
        }
        const balance =
          'error' in chain
            ? { summary: chain.error, error: chain.error }
            : await readBalance(chain, address);
        const result = {
          identity: options.identity,
          address,
          network: config.network,
          chainId: 'error' in chain ? undefined : chain.clients.chain.id,
          usdcAddress: 'error' in chain ? undefined : chain.contract.usdcAddress,
          paymentsAddress: 'error' in chain ? undefined : chain.contract.paymentsAddress,
          walletUsdc: balance.walletUsdc,
          creditsUsdc: balance.creditsUsdc,
          ...(deposited ? { depositedUsdc: deposited } : {}),
          ...(gas ? { depositGas: gas } : {}),
          ...(balance.error ? { error: balance.error } : {}),
          ...(config.network === 'local'
            ? { faucet: `svc chain faucet ${address} --usdc 10 --eth 1` }
            : {}),
        };
        if (ctx.json) {
          printJson(io, result);
          return;
        }
        io.stdout(
          `Fund identity "${options.identity}" with USDC on ${config.network}${result.chainId ? ` (chain id ${result.chainId})` : ''}:\n\n`,
        );
        io.stdout(`  ${address}\n\n`);
        if (io.isTty || options.qr) io.stdout(`${qrCode(address)}\n`);
        if (balance.error) io.stdout(`  balances  ${balance.error}\n`);
        else {
          io.stdout(
            `  wallet    ${balance.walletUsdc} USDC (moved into credits by the running buyer within a minute)\n`,
          );
          io.stdout(`  credits   ${balance.creditsUsdc} USDC\n`);
        }
        if (gas?.payer === 'self') io.stdout('  gas       paid by this wallet\n');
        if (gas?.payer === 'relayer') {
          io.stdout(
            `  gas       paid by relayer identity "${gas.relayerIdentity}" (${gas.relayerAddress}); this wallet needs no ETH\n`,
          );
        }
        if (gas?.payer === 'none') {
          io.stdout(`  gas       WAITING: ${gas.message}\n`);
          if (config.network === 'local') {
            io.stdout(`            local chain: svc chain faucet ${gas.fundAddress} --eth 1\n`);
          }
        }
        if (deposited) io.stdout(`  deposited ${deposited} USDC just now\n`);
        if (result.faucet) io.stdout(`\nLocal chain: get test funds with \`${result.faucet}\`\n`);
      },
    );
}
