/** Logging: pino, human-readable on a TTY, JSON lines otherwise; secrets redacted. */
import { createRequire } from 'node:module';
import pino, { type Logger } from 'pino';
import { redact } from '../errors/index.js';
import { batchedStderr } from './batchedWriter.js';

export type { Logger } from 'pino';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface CreateLoggerOptions {
  level?: LogLevel;
  /** Component name shown on every line (e.g. "buyer"). */
  name?: string;
  /** Force pretty (true) or JSON (false) output; default: pretty when stderr is a TTY. */
  pretty?: boolean;
  /**
   * Where to write; default stderr (stdout is for command output), JSON lines batched for up to
   * 20 ms (batchedWriter.ts).
   */
  destination?: NodeJS.WritableStream;
}

type Pretty = typeof import('pino-pretty');

function loadPretty(): Pretty {
  return createRequire(import.meta.url)('pino-pretty') as Pretty;
}

/**
 * Marks loggers made by `createLogger` (children inherit it): their request lines may be
 * serialised directly (requestLine.ts).
 */
export const PLAIN_JSON_LOGGER = Symbol('svc.plainJsonLogger');

/** Creates the process logger. Log lines go to stderr so command output stays parseable. */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const destination = options.destination ?? process.stderr;
  const usePretty = options.pretty ?? Boolean((destination as { isTTY?: boolean }).isTTY);
  // pino-pretty (about 30 modules) loads only for a terminal; services log JSON lines.
  const stream = usePretty
    ? loadPretty()({
        destination,
        colorize: true,
        sync: true,
        ignore: 'pid,hostname',
        translateTime: 'HH:MM:ss.l',
      })
    : options.destination
      ? destination
      : batchedStderr();
  const logger = pino(
    {
      level: options.level ?? 'info',
      ...(options.name ? { name: options.name } : {}),
      base: undefined,
      redact: {
        paths: [
          '*.authorization',
          '*.apiKey',
          '*.secret',
          '*.privateKey',
          'headers.authorization',
          'headers["x-api-key"]',
        ],
        censor: '[redacted]',
      },
      hooks: {
        logMethod(args, method) {
          method.apply(
            this,
            args.map((arg) => (typeof arg === 'string' ? redact(arg) : arg)) as Parameters<
              typeof method
            >,
          );
        },
      },
      serializers: {
        err: (error: unknown) => {
          const serialized = pino.stdSerializers.err(error as Error);
          if (serialized?.message) serialized.message = redact(serialized.message);
          if (serialized?.stack) serialized.stack = redact(serialized.stack);
          return serialized;
        },
      },
    },
    stream,
  );
  Object.defineProperty(logger, PLAIN_JSON_LOGGER, { value: true });
  return logger;
}

/** A logger that drops everything (tests, library use). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
