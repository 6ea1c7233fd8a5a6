/**
 * A request served by the buyer in the gateway's own process (docs/decisions/180-gateway-runs-
 * its-buyer.md): the buyer writes the answer on the client's response itself, and the gateway
 * settles and logs from the request's record instead of reading headers and the stream's usage
 * comment. No bytes are copied between the two and the body is parsed once.
 */
import type { ServerResponse } from 'node:http';
import { ERROR_CODES, isErrorCode } from '../../errors/index.js';
import type { BuyerCall, InProcessBuyer, RequestRecord } from '../../protocol/index.js';
import { reportOfRecord } from './costReport.js';
import { FailedStep, type LogFacts } from './requestLog.js';
import { afterSettling, type Billing, settleRequest } from './settleRequest.js';

/** When the answer's head went out, whoever wrote it: ms after `startedMs`, null before. */
function timeHead(res: ServerResponse, startedMs: number): () => number | null {
  let ttfbMs: number | null = null;
  const writeHead = res.writeHead;
  // Every head goes through writeHead, an implicit one (a first write) included.
  res.writeHead = function timedWriteHead(this: ServerResponse, ...args: unknown[]) {
    ttfbMs ??= Math.round(performance.now() - startedMs);
    return Reflect.apply(writeHead, this, args) as ServerResponse;
  } as ServerResponse['writeHead'];
  return () => ttfbMs;
}

/** Who served the request and how it ended, as the remote mode reads it from the answer. */
function recordFacts(
  res: ServerResponse,
  record: RequestRecord | undefined,
  model: string | undefined,
): LogFacts {
  const serviceId = record?.serviceId ?? null;
  const served: LogFacts = {
    status: res.statusCode,
    peerId: record?.peerId ?? null,
    provider: record?.provider ?? null,
    serviceId,
    servedModel: serviceId ?? model ?? null,
    streamed: record?.streamed ?? false,
  };
  if (res.destroyed && !res.writableFinished) {
    return { ...served, status: 499, errorCode: 'request_cancelled' };
  }
  const code = record?.errorCode;
  if (!code) return served;
  // A stream that failed after its head: the client got its format's error event.
  const status =
    res.statusCode < 400 ? (isErrorCode(code) ? ERROR_CODES[code].status : 502) : res.statusCode;
  return { ...served, status, errorCode: code.slice(0, 64) };
}

/**
 * Serves `call` through the in-process buyer, then settles from its record; what the log shows.
 * A buyer that throws still has its request settled, and its failure carries those facts.
 */
export async function callInProcess(
  billing: Billing,
  buyer: InProcessBuyer,
  call: BuyerCall,
  res: ServerResponse,
  at: { startedMs: number; model: string | undefined },
): Promise<LogFacts> {
  const ttfbMs = timeHead(res, at.startedMs);
  let record: RequestRecord | undefined;
  let failure: { error: unknown } | undefined;
  try {
    ({ record } = await buyer.serve(call, res));
  } catch (error) {
    failure = { error };
  }
  const known: LogFacts = { ...recordFacts(res, record, at.model), ttfbMs: ttfbMs() };
  // Without a record the buyer's journal decides (never under-counted): src/gateway/server/settleRequest.ts.
  const settled = await settleRequest(billing, record ? reportOfRecord(record) : null);
  const facts = afterSettling(known, settled);
  if (failure) throw new FailedStep(failure.error, facts);
  return facts;
}
