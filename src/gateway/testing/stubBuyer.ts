/**
 * A stub buyer for gateway tests, speaking the buyer's HTTP seam:
 * its `x-svc-*` response headers, SSE streams ending with `: svc-usage {...}`, `GET /_svc/requests/<id>`,
 * and `x-svc-max-cost-usd` honoured (the cost is capped by it, as the real buyer caps max_tokens).
 * It records every request's headers so tests can assert what the gateway stripped.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatUsd, parseUsd } from '../../money/index.js';
import {
  decodeControlHeaders,
  encodeRequestRecord,
  encodeSellerHeaders,
  encodeUsageComment,
  encodeUsageHeaders,
  JOURNAL_SINCE_HEADER,
  latencyHeader,
  REQUEST_RECORD_PATH,
  type RequestRecord,
  SVC_HEADER,
} from '../../protocol/index.js';
import {
  anthropicMessage,
  anthropicStreamStart,
  CACHED_TOKENS,
  chunkEvent,
  INPUT_TOKENS,
  OUTPUT_PER_CHUNK,
  openAiCompletion,
  streamEnd,
} from './stubAnswers.js';

export interface StubBuyerOptions {
  /** Cost of a complete answer, USD string (default "0.000100"). */
  costUsd?: string;
  /** SSE chunks in a streamed answer (default 3). */
  streamChunks?: number;
  /** Delay between SSE chunks (default 0). */
  chunkDelayMs?: number;
  /** Leave out the cost header and the svc-usage comment (spend tracking via lookup only). */
  omitCost?: boolean;
  /** Answer `GET /_svc/requests/<id>` with 503. */
  lookupDown?: boolean;
  /** Answer model requests with this error status (no cost header, no record), like a routing failure. */
  errorStatus?: number;
  /** Cut the connection after this many SSE chunks (a buyer dying mid-stream). */
  cutStreamAfter?: number;
  /**
   * While true, a stream stops after its first chunk and waits (until `crash` cuts it, or until
   * this is false again): a crash then always finds the streams it is meant to cut.
   */
  holdStreams?: boolean;
  /** Models of `GET /v1/models`. */
  models?: string[];
  /** Prices of one offer per model in `GET /v1/models` (default: no offers listed). */
  prices?: { inputUsdPerMillion: number; outputUsdPerMillion: number };
  /** The offers of every model in `GET /v1/models`, in routing order (replaces `prices`). */
  offers?: StubOffer[];
  /**
   * Keep every request and record for assertions and `GET /_svc/requests/<id>` (default true).
   * Benchmarks turn it off: an ever-growing history would tax the process they measure in.
   */
  keepHistory?: boolean;
  /** Bodies of `GET /_svc/status`, `/_svc/peers` and `/_svc/channels` (the console's network pages). */
  controlPlane?: { status: unknown; peers: unknown; channels: unknown };
  /** `x-svc-journal-since` of a 404 (default: when the stub started). */
  journalSinceMs?: number;
}

/** One catalog offer (spec 2.3 `peers` item, trimmed). */
export interface StubOffer {
  peerId: string;
  prices: { inputUsdPerMillion: number; outputUsdPerMillion: number };
  reputationScore?: number | null;
  /** The buyer's own preferences admit it (default true). */
  eligible?: boolean;
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type BuyerRecord = RequestRecord;

export interface StubBuyer {
  url: string;
  received: ReceivedRequest[];
  records: Map<string, BuyerRecord>;
  options: StubBuyerOptions;
  /**
   * A buyer killed (-9) and restarted on its journal: every connection is cut, requests arriving
   * in the next `downMs` are refused, and records left open are closed with `buyer_restarted` at
   * what their streams delivered (the delivered fraction of the cost, capped; 0 when nothing
   * was), as the real buyer pays them with a late voucher (src/buyer/closeOpenRecords.ts).
   * Resolves with how many requests it cut.
   */
  crash(downMs?: number): Promise<number>;
  stop(): Promise<void>;
}

export const STUB_PEER_ID = 'ab'.repeat(20);

function costFor(options: StubBuyerOptions, maxHeader: string | undefined, fraction = 1): bigint {
  const full = parseUsd(options.costUsd ?? '0.000100');
  let cost = (full * BigInt(Math.round(fraction * 1000))) / 1000n;
  if (maxHeader) {
    const max = parseUsd(maxHeader);
    if (cost > max) cost = max;
  }
  return cost;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts the stub on 127.0.0.1:0. */
export async function startStubBuyer(options: StubBuyerOptions = {}): Promise<StubBuyer> {
  const startedAt = Date.now();
  const received: ReceivedRequest[] = [];
  const records = new Map<string, BuyerRecord>();
  /** Streams under way: what each has delivered, for a crash to charge. */
  const streaming = new Map<string, { sent: () => number; cost: (fraction: number) => bigint }>();
  let down = false;
  const server: Server = createServer(async (req, res) => {
    if (down) return void req.socket.destroy();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString();
    const path = (req.url ?? '/').split('?')[0]!;
    const keep = options.keepHistory !== false;
    if (keep) received.push({ method: req.method ?? 'GET', path, headers: req.headers, body });
    if (path.startsWith(REQUEST_RECORD_PATH)) {
      const record = records.get(decodeURIComponent(path.slice(REQUEST_RECORD_PATH.length)));
      if (options.lookupDown) return void res.writeHead(503).end();
      if (!record)
        return void res
          .writeHead(404, {
            'content-type': 'application/json',
            [JOURNAL_SINCE_HEADER]: String(options.journalSinceMs ?? startedAt),
          })
          .end('{"error":"unknown"}');
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(encodeRequestRecord(record));
    }
    const controlPlane = options.controlPlane;
    if (
      controlPlane &&
      (path === '/_svc/status' || path === '/_svc/peers' || path === '/_svc/channels')
    ) {
      const answer = controlPlane[path.slice('/_svc/'.length) as keyof typeof controlPlane];
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(answer));
    }
    if (path === '/v1/models') {
      const data = (options.models ?? ['model-a', 'model-b']).map((id) => ({
        id,
        object: 'model',
        name: id,
        peers: (
          options.offers ??
          (options.prices ? [{ peerId: STUB_PEER_ID, prices: options.prices }] : [])
        ).map((offer) => ({
          serviceId: id,
          reputationScore: null,
          eligible: true,
          ...offer,
        })),
      }));
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data }));
    }
    if (path === '/v1/messages/count_tokens') {
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ input_tokens: INPUT_TOKENS }));
    }
    let parsed: { model?: string; stream?: boolean } = {};
    try {
      parsed = JSON.parse(body) as typeof parsed;
    } catch {
      // multipart or empty bodies are answered as non-streaming
    }
    const model = parsed.model ?? 'model-a';
    if (options.errorStatus) {
      const error = {
        error: {
          message: 'no seller offers this model',
          type: 'api_error',
          code: 'model_not_found',
          param: null,
        },
      };
      return void res
        .writeHead(options.errorStatus, { 'content-type': 'application/json' })
        .end(JSON.stringify(error));
    }
    const control = decodeControlHeaders(req.headers);
    const requestId = control.requestId ?? `req_${randomUUID()}`;
    const maxHeader = control.maxCostUsd;
    const common = encodeSellerHeaders({
      requestId,
      peerId: STUB_PEER_ID,
      provider: 'stub',
      // The real buyer names the seller's service id here, never the client's string.
      service: model.replace(/[^\x21-\x7e]/g, '?').slice(0, 256),
      inputUsdPerMillion: '1',
      outputUsdPerMillion: '2',
      attempts: 'none',
    });
    const record: BuyerRecord = {
      requestId,
      status: 200,
      completed: false,
      streamed: Boolean(parsed.stream),
      peerId: STUB_PEER_ID,
      provider: 'stub',
      serviceId: model,
      model,
      usage: { inputTokens: INPUT_TOKENS, cachedInputTokens: CACHED_TOKENS, outputTokens: 0 },
      costUsd: '0.000000',
      latencyMs: 1,
      attempts: [],
    };
    if (keep) records.set(requestId, record);
    const chunkCount = options.streamChunks ?? 3;
    if (!parsed.stream) {
      const outputTokens = OUTPUT_PER_CHUNK * chunkCount;
      const cost = costFor(options, maxHeader);
      Object.assign(record, {
        completed: true,
        costUsd: formatUsd(cost),
        usage: { ...record.usage, outputTokens },
      });
      const answer = JSON.stringify(
        path === '/v1/messages'
          ? anthropicMessage(model, requestId, outputTokens)
          : openAiCompletion(model, requestId, outputTokens),
      );
      const usageHeaders = encodeUsageHeaders({
        inputTokens: INPUT_TOKENS,
        cachedInputTokens: CACHED_TOKENS,
        outputTokens,
        tokenSource: 'seller',
        estimatedCostUsd: formatUsd(cost),
      });
      if (options.omitCost) delete usageHeaders[SVC_HEADER.estimatedCostUsd];
      // A complete answer carries its length, as the buyer's does (src/buyer/deliver.ts).
      res.writeHead(200, {
        ...common,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(answer),
        ...usageHeaders,
        ...latencyHeader(1),
      });
      return void res.end(answer);
    }
    res.writeHead(200, {
      ...common,
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
    });
    let sent = 0;
    if (keep) {
      streaming.set(requestId, {
        sent: () => sent,
        cost: (fraction) => costFor(options, maxHeader, fraction),
      });
    }
    res.on('close', () => {
      streaming.delete(requestId);
      if (record.completed || record.errorCode) return;
      // Client went away: the delivered part is still paid for.
      const fraction = sent / chunkCount;
      Object.assign(record, {
        completed: true,
        status: 499,
        costUsd: formatUsd(costFor(options, maxHeader, fraction)),
        usage: { ...record.usage, outputTokens: OUTPUT_PER_CHUNK * sent },
      });
    });
    if (path === '/v1/messages') res.write(anthropicStreamStart(model, requestId));
    for (let index = 0; index < chunkCount; index++) {
      if (res.destroyed) return;
      res.write(chunkEvent(path, model, requestId, index));
      sent++;
      if (options.cutStreamAfter !== undefined && sent >= options.cutStreamAfter) {
        await sleep(10);
        res.socket?.destroy();
        return;
      }
      while (options.holdStreams && !res.destroyed) await sleep(5);
      if (options.chunkDelayMs) await sleep(options.chunkDelayMs);
    }
    if (res.destroyed) return;
    const outputTokens = OUTPUT_PER_CHUNK * chunkCount;
    const cost = costFor(options, maxHeader);
    Object.assign(record, {
      completed: true,
      costUsd: formatUsd(cost),
      usage: { ...record.usage, outputTokens },
    });
    res.write(streamEnd(path, outputTokens));
    if (!options.omitCost) {
      const usage = {
        inputTokens: INPUT_TOKENS,
        cachedInputTokens: CACHED_TOKENS,
        outputTokens,
        costUsd: formatUsd(cost),
      };
      res.write(encodeUsageComment(usage));
    }
    res.end();
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    records,
    options,
    crash: async (downMs = 50) => {
      down = true;
      let cut = 0;
      for (const record of records.values()) {
        if (!record.completed && !record.errorCode) {
          const stream = streaming.get(record.requestId);
          const sent = stream?.sent() ?? 0;
          const total = options.streamChunks ?? 3;
          const cost = stream && sent > 0 ? stream.cost(sent / total) : 0n;
          Object.assign(record, {
            costUsd: formatUsd(cost),
            errorCode: 'buyer_restarted',
            usage: { ...record.usage, outputTokens: OUTPUT_PER_CHUNK * sent },
          });
          cut++;
        }
      }
      server.closeAllConnections();
      await sleep(downMs);
      down = false;
      return cut;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
