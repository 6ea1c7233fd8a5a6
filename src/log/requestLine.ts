/**
 * The one info line each side (buyer, seller, gateway) writes per request: who, what, the
 * outcome and the cost; never prompt or answer text (docs/guide/configuration.md "The local network").
 *
 * The line has fixed, flat fields (strings, numbers, null), so a logger made by `createLogger`
 * gets it serialised here, byte for byte as pino would write it, instead of through pino's
 * generic path: that path runs the logger's path redaction (`*.authorization`, …) over every
 * value, and none of those paths can match a string or a number. The message hook only redacts
 * the message, `"request"`. Any other logger (custom serializers, formatters, mixins, pretty
 * output that needs pino's metadata) takes pino's path (decision 158).
 */
import pino from 'pino';
import { type Logger, PLAIN_JSON_LOGGER } from './logger.js';

export interface RequestLine {
  requestId: string | null;
  route: string;
  model: string | null;
  /** The seller's peer id (on the seller: the buyer's). */
  peer: string | null;
  status: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /** Decimal USD with 6 fractional digits. */
  costUsd: string;
  ms: number;
  errorCode?: string | null;
}

const FIELDS = [
  'requestId',
  'route',
  'model',
  'peer',
  'status',
  'inputTokens',
  'cachedInputTokens',
  'outputTokens',
  'costUsd',
  'ms',
  'errorCode',
] as const;

const {
  chindingsSym,
  endSym,
  formattersSym,
  hooksSym,
  lsCacheSym,
  messageKeySym,
  mixinSym,
  needsMetadataGsym,
  nestedKeySym,
  serializersSym,
  streamSym,
  timeSym,
} = pino.symbols;
/** Not in pino's typings (a child's `msgPrefix`). */
const msgPrefixSym = (pino.symbols as unknown as Record<string, symbol>).msgPrefixSym;

/** What writing a line directly needs from one logger instance (pino's private fields). */
interface Direct {
  stream: { write(line: string): unknown };
  /** `{"level":30`. */
  level: string;
  /** `,"time":…` now. */
  time: () => string;
  /** The child bindings (`,"name":"seller"`…). */
  bindings: string;
  /** The message and the line's end. */
  end: string;
}

type Fields = Record<symbol, unknown>;

const directOf = new WeakMap<Logger, Direct | null>();

/** The direct writer of `logger`, or null when only pino's own path writes its lines right. */
function direct(logger: Logger): Direct | null {
  const known = directOf.get(logger);
  if (known !== undefined) return known;
  const fields = logger as unknown as Fields;
  const formatters = fields[formattersSym] as { log?: unknown } | undefined;
  const serializers = (fields[serializersSym] ?? {}) as Record<string, unknown>;
  const hooks = fields[hooksSym] as { streamWrite?: unknown } | undefined;
  const stream = fields[streamSym] as (Direct['stream'] & Fields) | undefined;
  const level = (fields[lsCacheSym] as Record<number, unknown> | undefined)?.[
    logger.levels.values.info ?? 30
  ];
  const time = fields[timeSym];
  const made =
    fields[PLAIN_JSON_LOGGER] === true &&
    formatters?.log === undefined &&
    fields[mixinSym] === undefined &&
    (msgPrefixSym === undefined || fields[msgPrefixSym] === undefined) &&
    fields[nestedKeySym] == null &&
    fields[messageKeySym] === 'msg' &&
    hooks?.streamWrite === undefined &&
    stream !== undefined &&
    stream[needsMetadataGsym] !== true &&
    typeof stream.write === 'function' &&
    typeof level === 'string' &&
    typeof time === 'function' &&
    FIELDS.every((field) => serializers[field] === undefined)
      ? {
          stream,
          level,
          time: time as () => string,
          bindings: String(fields[chindingsSym] ?? ''),
          end: `,"msg":"request"${String(fields[endSym])}`,
        }
      : null;
  directOf.set(logger, made);
  return made;
}

const text = (value: string | null): string => (value === null ? 'null' : JSON.stringify(value));
const num = (value: number): string => (Number.isFinite(value) ? String(value) : 'null');

/** Writes the request's line at info level. */
export function logRequestLine(logger: Logger, line: RequestLine): void {
  if (!logger.isLevelEnabled('info')) return;
  const writer = direct(logger);
  const { errorCode } = line;
  if (writer === null) {
    const { errorCode: _, ...rest } = line;
    logger.info({ ...rest, ...(errorCode ? { errorCode } : {}) }, 'request');
    return;
  }
  // pino's order: level, time, the child bindings, the object's fields, the message.
  writer.stream.write(
    `${writer.level}${writer.time()}${writer.bindings}` +
      `,"requestId":${text(line.requestId)},"route":${text(line.route)},"model":${text(line.model)}` +
      `,"peer":${text(line.peer)},"status":${num(line.status)},"inputTokens":${num(line.inputTokens)}` +
      `,"cachedInputTokens":${num(line.cachedInputTokens)},"outputTokens":${num(line.outputTokens)}` +
      `,"costUsd":${text(line.costUsd)},"ms":${num(line.ms)}` +
      (errorCode ? `,"errorCode":${text(errorCode)}` : '') +
      writer.end,
  );
}
