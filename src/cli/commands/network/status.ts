/** `svc network status`: how the running buyer's node is reachable and what it sees. */
import type { Command } from 'commander';
import type { Reachability } from '../../../network/index.js';
import { CliContext } from '../../context.js';
import { CliError } from '../../errors.js';
import type { CliIo } from '../../io.js';
import { printJson } from '../../output.js';

interface BuyerStatus {
  reachability?: string;
  peerCount?: number;
  reachablePeerCount?: number;
  network?: { status: string; message: string; reachableAs?: Reachability };
}

/** Registers `svc network status` on the `network` group. */
export function registerNetworkStatus(network: Command, io: CliIo): void {
  network
    .command('status')
    .description(
      'how this machine is reachable (public, relayed via whom, hole punched) and what it sees',
    )
    .action(async (_flags: unknown, command: Command) => {
      const ctx = CliContext.of(command, io);
      const { config } = ctx.loadConfig();
      const url = `http://127.0.0.1:${config.buyer.port}/_svc/status`;
      let status: BuyerStatus;
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(3000) });
        status = (await response.json()) as BuyerStatus;
      } catch {
        throw new CliError(
          `no buyer answers at ${url}: start it with \`svc buyer start\` (or \`svc up\`)`,
          1,
        );
      }
      if (ctx.json) {
        printJson(io, status);
        return;
      }
      io.stdout(`network: ${status.network?.message ?? status.reachability ?? 'unknown'}\n`);
      io.stdout(
        `sellers: ${status.reachablePeerCount ?? 0} reachable of ${status.peerCount ?? 0} known\n`,
      );
      const { formatReachability } = await import('../../../network/index.js');
      const reachableAs = status.network?.reachableAs;
      io.stdout(`reachable as: ${reachableAs ? formatReachability(reachableAs) : 'unknown'}\n`);
      if (reachableAs && reachableAs.relayedConnections > 0) {
        io.stdout(`relayed connections: ${reachableAs.relayedConnections}\n`);
      }
    });
}
