/** `svc buyer deposit`: where to send USDC, current wallet and credits, and an optional deposit now. */
import { createRequire } from 'node:module';
import type { Command } from 'commander';
import { DEFAULT_IDENTITY } from '../../../identity/index.js';
import { formatUsd } from '../../../money/index.js';
import { CliContext } from '../../context.js';
import type { CliIo } from '../../io.js';
import { printJson } from '../../output.js';
import { readBalance, tryConnect } from './balances.js';

interface QrTerminal {
  generate(text: string, options: { small: boolean }, callback: (qr: string) => void): void;
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
    .option('--identity <name>', 'which wallet to fund', DEFAULT_IDENTITY)
    .option('--qr', 'print the QR code even when output is not a terminal')
    .option(
      '--now',
      'deposit the wallet USDC into credits now (the running buyer does it within a minute)',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  svc buyer deposit\n  svc buyer deposit --identity team-a --json\n  svc buyer deposit --now\n\nSend USDC (on the configured chain) to the address; the running buyer moves it into\ncredits within a minute. The wallet also needs a little ETH for gas.',
    )
    .action(
      async (options: { identity: string; now?: boolean; qr?: boolean }, command: Command) => {
        const ctx = CliContext.of(command, io);
        const identity = ctx.identities().load(options.identity);
        const address = identity.account.address;
        const config = ctx.loadConfig().config.chain;
        const chain = tryConnect(ctx);
        let deposited: string | undefined;
        if (options.now && !('error' in chain)) {
          const wallet = await chain.contract.usdcBalanceOf(address);
          if (wallet > 0n) {
            await chain.contract.deposit(identity.account, wallet);
            deposited = formatUsd(wallet);
          }
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
        if (deposited) io.stdout(`  deposited ${deposited} USDC just now\n`);
        if (result.faucet) io.stdout(`\nLocal chain: get test funds with \`${result.faucet}\`\n`);
      },
    );
}
