/** A request the gateway authenticated, as its routes are handed it. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller } from './authenticate.js';

export interface Incoming {
  req: IncomingMessage;
  res: ServerResponse;
  caller: Caller;
  /** `performance.now()` when it arrived (latency and time to first byte). */
  startedMs: number;
}
