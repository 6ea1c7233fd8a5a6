/** `svc gateway console login [member]`: a one-time sign-in link to the web console. */
import type { Command } from 'commander';
import { LOGIN_LINK_MINUTES } from '../../defaults.js';
import type { CliIo } from '../../io.js';
import { printJson } from '../../output.js';
import { withStore } from './shared.js';

/** The console URL of the configured gateway (or `--url`). */
function consoleBase(url: string | undefined, host: string, port: number): string {
  if (url) return url.replace(/\/+$/, '');
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}

export function registerConsoleCommands(gateway: Command, io: CliIo): void {
  const consoleCommand = gateway.command('console').description('the web console at /console');
  consoleCommand
    .command('login')
    .description(
      `print a one-time sign-in link (valid ${LOGIN_LINK_MINUTES} min): as a member, or as the operator (admin) without one`,
    )
    .argument('[member]', 'member name (owners and org admins get admin pages; others their own)')
    .option('--url <url>', 'the gateway as the browser reaches it (default from config)')
    .addHelpText(
      'after',
      '\nExamples:\n  svc gateway console login            # operator: every page\n  svc gateway console login ann --url https://gw.example.com',
    )
    .action(async (member: string | undefined, options: { url?: string }, command: Command) => {
      await withStore(command, io, async (store, ctx, gateway) => {
        const { host, port } = ctx.loadConfig().config.gateway;
        const link = await gateway.createLoginLink(store, member ?? null, Date.now());
        const url = `${consoleBase(options.url, host, port)}/console/login?token=${link.token}`;
        const expiresAt = new Date(link.expiresAt).toISOString();
        if (ctx.json) return printJson(io, { url, subject: link.subject, expiresAt });
        io.stdout(`Open this link once to sign in as ${link.subject} (expires ${expiresAt}):\n`);
        io.stdout(`  ${url}\n`);
      });
    });
}
