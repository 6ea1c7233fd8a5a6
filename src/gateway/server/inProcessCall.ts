/**
 * A request served by the buyer in the gateway's own process (docs/decisions/180-gateway-runs-
 * its-buyer.md): the buyer writes the answer on the client's response itself, and the gateway
 * settles and logs from the request's record instead of reading headers and the stream's usage
 * comment. No bytes are copied between the two and the body is parsed once.
 */
import type { ServerResponse } from 'node:http';
import { ERROR_CODES, isErrorCode } from '../../errors/index.js';
import type { BuyerCall, InProcessBuyer, RequestRecord } from '../../protocol/index.js';
import type { LogRow } from '../store/types.js';
import { reportOfRecord } from './costReport.js';
import { type Billing, settleRequest } from './settleRequest.js';

/** Sets `log.ttfbMs` when the answer's head goes out, whoever writes it. */
function timeHead(res: ServerResponse, log: LogRow, startedMs: number): void {
  const writeHead = res.writeHead;
  // Every head goes through writeHead, an implicit one (a first write) included.
  res.writeHead = function timedWriteHead(this: ServerResponse, ...args: unknown[]) {
    log.ttfbMs ??= Math.round(performance.now() - startedMs);
    return Reflect.apply(writeHead, this, args) as ServerResponse;
  } as ServerResponse['writeHead'];
}

/** Logs who served the request and how it ended, as the remote mode reads it from the answer. */
function logRecord(
  log: LogRow,
  res: ServerResponse,
  record: RequestRecord | undefined,
  model: string | undefined,
): void {
  log.status = res.statusCode;
  log.peerId = record?.peerId ?? null;
  log.provider = record?.provider ?? null;
  log.serviceId = record?.serviceId ?? null;
  log.servedModel = log.serviceId ?? model ?? null;
  log.streamed = record?.streamed ?? false;
  if (res.destroyed && !res.writableFinished) {
    log.status = 499;
    log.errorCode = 'request_cancelled';
    return;
  }
  const code = record?.errorCode;
  if (!code) return;
  log.errorCode = code.slice(0, 64);
  // A stream that failed after its head: the client got its format's error event.
  if (res.statusCode < 400) log.status = isErrorCode(code) ? ERROR_CODES[code].status : 502;
}

/** Serves `call` through the in-process buyer, then logs and settles from its record. */
export async function callInProcess(
  billing: Billing,
  buyer: InProcessBuyer,
  call: BuyerCall,
  res: ServerResponse,
  at: { startedMs: number; model: string | undefined },
): Promise<void> {
  timeHead(res, billing.log, at.startedMs);
  let record: RequestRecord | undefined;
  try {
    ({ record } = await buyer.serve(call, res));
  } finally {
    logRecord(billing.log, res, record, at.model);
    // Without a record the buyer's journal decides (never under-counted): src/gateway/server/settleRequest.ts.
    await settleRequest(billing, record ? reportOfRecord(record) : null);
  }
}
