/** Exit codes of `svc` and the error commands throw to choose one. */
import { isSvcError } from '../errors/index.js';

/** 0 success. */
export const EXIT_OK = 0;
/** 1 the command ran and failed (a lookup found nothing, a service refused, the chain is down). */
export const EXIT_FAILURE = 1;
/** 2 the command line itself was wrong: an unknown command or option, or a value that does not parse. */
export const EXIT_USAGE = 2;

/** Thrown by commands to fail with a chosen exit code and message. */
export class CliError extends Error {
  override name = 'CliError';
  readonly exitCode: number;
  constructor(message: string, exitCode = EXIT_FAILURE) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** A flag or argument value that does not parse: exits EXIT_USAGE, like commander's own checks. */
export function usageError(message: string): CliError {
  return new CliError(message, EXIT_USAGE);
}

/** The exit code of an svc error: `invalid_argument` is a bad command line, the rest failures. */
export function exitCodeOfSvcError(error: unknown): number {
  return isSvcError(error) && error.code === 'invalid_argument' ? EXIT_USAGE : EXIT_FAILURE;
}
