/**
 * The one info line each side (buyer, seller, gateway) writes per request: who, what, the
 * outcome and the cost; never prompt or answer text (README "The local network").
 */
import type { Logger } from './logger.js';

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

/** Writes the request's line at info level. */
export function logRequestLine(logger: Logger, line: RequestLine): void {
  const { errorCode, ...rest } = line;
  logger.info({ ...rest, ...(errorCode ? { errorCode } : {}) }, 'request');
}
