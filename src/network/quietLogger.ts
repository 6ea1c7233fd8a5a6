/**
 * libp2p's debug logging without its per-stream cost. libp2p creates a `debug` logger for every
 * stream (muxer stream, protocol negotiation), and each creation checks whether stderr is a
 * TTY: four syscalls and ~3 % of a seller's CPU per request, for logs nobody sees unless
 * `DEBUG` is set. With `DEBUG` set, libp2p's own loggers are used as before.
 */
import type { ComponentLogger, Logger } from '@libp2p/interface';

function quietLogger(): Logger {
  const log = Object.assign(() => undefined, {
    enabled: false,
    error: () => undefined,
    trace: () => undefined,
    newScope: (): Logger => log,
  });
  return log;
}

const QUIET = quietLogger();

/** A ComponentLogger whose loggers discard everything (libp2p's default when DEBUG is unset). */
export const quietComponentLogger: ComponentLogger = { forComponent: () => QUIET };

/** The `logger` option for createLibp2p: quiet unless `DEBUG` asks for libp2p's logs. */
export function libp2pLogger(env: NodeJS.ProcessEnv = process.env): ComponentLogger | undefined {
  return env.DEBUG ? undefined : quietComponentLogger;
}
