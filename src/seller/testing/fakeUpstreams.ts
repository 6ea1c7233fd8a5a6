/**
 * The one fake model vendor for tests: a local HTTP server speaking the OpenAI chat
 * completions, OpenAI responses, Anthropic messages and OpenAI images wire formats, streaming
 * and not, with usage (cached tokens included), and a queued video API (`…/video/queue`,
 * `…/video/retrieve`). Faults can be injected (5xx, 429, 400, malformed JSON, cut SSE, hangs, a
 * stream that resets or sends an error event after its preamble, before any content),
 * a test can script the exact answer (`replay`), and every request is recorded with its
 * headers, body and whether the client hung up before the answer ended (how tests see a cancel
 * arrive).
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatSse, type SseEvent } from '../../formats/index.js';
import type { TokenUsage } from '../../money/index.js';
import { type AnswerSpec, answerJson, answerSse } from '../answer.js';

export type FakeFault =
  | 'none'
  | 'status500'
  | 'status429'
  | 'status400'
  | 'malformed-json'
  /** Streams close after a few events without the final one. */
  | 'broken-sse'
  /** Never answers (until the client goes away). */
  | 'hang'
  /** Sends the head, the preamble and the first content event, then stalls. */
  | 'hang-after-first-chunk'
  /** Streams send the head and the preamble before any content, then cut the connection. */
  | 'reset-before-content'
  /** Streams send the head and the preamble, then the vendor's in-stream error event. */
  | 'error-before-content';

export interface FakeUpstreamOptions {
  /** Assistant text of every answer. */
  text?: string;
  /** Usage reported (default: 12 input of which 4 cached, output = words of text). */
  usage?: TokenUsage;
  /** Delay between stream events. */
  chunkDelayMs?: number;
  fault?: FakeFault;
  /** When set, requests without this key (Bearer or x-api-key) get 401. */
  requireApiKey?: string;
  /** When set, every model request gets exactly this answer (faults and `text` are ignored). */
  replay?: Replay;
  /** Video jobs answer `in_progress` this many polls before the video (default 1). */
  videoPollsUntilDone?: number;
  /**
   * With a `…-before-content` fault: after the preamble, keep-alives (Anthropic `ping` events, an
   * SSE comment for the others) every 50 ms until this settles, then the fault.
   */
  keepAliveUntil?: Promise<unknown>;
}

/**
 * Events a vendor sends before its first content, counted in the streams src/seller/answer.ts
 * renders: chat's role-only chunk; responses' `response.created`, `response.in_progress`,
 * `response.output_item.added`, `response.content_part.added`; messages' `message_start` and
 * `content_block_start` (then a `ping`, as Anthropic sends).
 */
const PREAMBLE_EVENTS = { chat: 1, responses: 4, messages: 2 } as const;
const ANTHROPIC_PING = 'event: ping\ndata: {"type": "ping"}\n\n';

/** Each vendor's error event inside a 200 stream, as it sends one. */
const STREAM_ERROR_EVENT = {
  chat: 'data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}\n\n',
  responses:
    'event: error\ndata: {"type":"error","code":"server_error","message":"The server had an error while processing your request.","param":null,"sequence_number":4}\n\n',
  messages:
    'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
} as const;

/** A scripted answer: a JSON body with its status, or these SSE events. */
export type Replay =
  | { kind: 'json'; status: number; body: unknown }
  | { kind: 'sse'; events: SseEvent[] | AsyncIterable<SseEvent> };

/** The smallest recognisable mp4: one `ftyp` box (what a finished video job returns). */
export const TINY_MP4 = Buffer.from([
  0x00, 0x00, 0x00, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d, 0x00, 0x00, 0x02, 0x00,
  0x69, 0x73, 0x6f, 0x6d, 0x6d, 0x70, 0x34, 0x31,
]);

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, or the raw text when it is not JSON. */
  body: unknown;
  rawBody: Buffer;
  /** True when the client closed the connection before the answer ended. */
  closedEarly: boolean;
  /** Resolves when the exchange is over (answer sent or client gone). */
  done: Promise<void>;
}

export interface FakeUpstream {
  /** http://127.0.0.1:<port> */
  url: string;
  /** `${url}/v1`, the base URL a seller provider (or an SDK) takes. */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Changes behaviour for later requests. */
  configure(options: FakeUpstreamOptions): void;
  close(): Promise<void>;
}

const PNG_1PX =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

async function replay(answer: Replay, res: ServerResponse): Promise<void> {
  if (answer.kind === 'json') {
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.body));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for await (const event of answer.events) res.write(formatSse(event));
  res.end();
}

function openAiError(res: ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type, param: null, code: null } }));
}

function anthropicError(res: ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_fake' });
  res.end(JSON.stringify({ type: 'error', error: { type, message } }));
}

/** Starts the fake on 127.0.0.1, port 0. */
export async function startFakeUpstream(initial: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  let options: FakeUpstreamOptions = { ...initial };
  const requests: RecordedRequest[] = [];
  const videoJobs = new Map<string, { polls: number }>();
  let nextJob = 1;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      let body: unknown = rawBody.toString('utf8');
      try {
        body = JSON.parse(rawBody.toString('utf8'));
      } catch {
        // multipart or garbage: keep the text
      }
      let settle!: () => void;
      const record: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        rawBody,
        closedEarly: false,
        done: new Promise<void>((resolve) => {
          settle = resolve;
        }),
      };
      requests.push(record);
      res.on('close', () => {
        if (!res.writableFinished) record.closedEarly = true;
        settle();
      });
      void answer(record, res).catch(() => res.destroy());
    });
  });

  async function answer(record: RecordedRequest, res: ServerResponse): Promise<void> {
    const path = record.path.split('?')[0]!;
    const anthropic = path === '/v1/messages';
    const fail = anthropic ? anthropicError : openAiError;
    const { fault = 'none', requireApiKey } = options;
    if (requireApiKey !== undefined) {
      // Anthropic takes x-api-key (its SDK may also send a Bearer token); OpenAI takes Bearer.
      const bearer = record.headers.authorization?.replace(/^Bearer /, '');
      const given = anthropic ? (record.headers['x-api-key'] ?? bearer) : bearer;
      if (given !== requireApiKey) {
        fail(
          res,
          401,
          anthropic ? 'authentication_error' : 'invalid_request_error',
          'invalid api key',
        );
        return;
      }
    }
    if (record.method === 'POST' && /\/video\/(queue|retrieve)$/.test(path)) {
      answerVideo(path, record.body, res);
      return;
    }
    const known = [
      '/v1/chat/completions',
      '/v1/responses',
      '/v1/messages',
      '/v1/images/generations',
      '/v1/images/edits',
    ];
    if (record.method !== 'POST' || !known.includes(path)) {
      fail(res, 404, anthropic ? 'not_found_error' : 'invalid_request_error', `no route ${path}`);
      return;
    }
    if (options.replay) return replay(options.replay, res);
    if (fault === 'status500')
      return fail(res, 500, anthropic ? 'api_error' : 'server_error', 'upstream exploded');
    if (fault === 'status429') {
      res.setHeader('retry-after', '7');
      return fail(res, 429, 'rate_limit_error', 'slow down');
    }
    if (fault === 'status400')
      return fail(res, 400, 'invalid_request_error', 'bad parameter: temperature');
    if (fault === 'hang') return;

    const body = (
      typeof record.body === 'object' && record.body !== null ? record.body : {}
    ) as Record<string, unknown>;
    const text = options.text ?? 'Hello from the fake upstream.';
    const spec: AnswerSpec = {
      model: typeof body.model === 'string' ? body.model : 'unknown',
      text,
      usage: options.usage ?? {
        inputTokens: 12,
        cachedInputTokens: 4,
        outputTokens: text.split(/\s+/).length,
      },
    };
    if (path.startsWith('/v1/images/')) {
      const count = typeof body.n === 'number' ? body.n : 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      const { inputTokens, outputTokens } = spec.usage;
      res.end(
        JSON.stringify({
          created: Math.floor(Date.now() / 1000),
          data: Array.from({ length: count }, (_, i) =>
            body.response_format === 'url'
              ? { url: `http://127.0.0.1/fake-images/${i}.png` }
              : { b64_json: PNG_1PX },
          ),
          usage: {
            total_tokens: inputTokens + outputTokens,
            input_tokens: inputTokens,
            output_tokens: outputTokens,
            input_tokens_details: { text_tokens: inputTokens, image_tokens: 0 },
          },
        }),
      );
      return;
    }
    const format = path === '/v1/responses' ? 'responses' : anthropic ? 'messages' : 'chat';
    if (body.stream !== true) {
      if (fault === 'malformed-json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"id": "chatcmpl-broken", "choices": [');
        return;
      }
      const json = answerJson(format, spec);
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req_fake' });
      res.end(JSON.stringify(json));
      return;
    }
    const includeUsage =
      (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
    const events = answerSse(format, spec, { includeUsage });
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
    });
    if (fault === 'reset-before-content' || fault === 'error-before-content') {
      for (const event of events.slice(0, PREAMBLE_EVENTS[format])) res.write(event);
      if (format === 'messages') res.write(ANTHROPIC_PING);
      const { keepAliveUntil } = options;
      if (keepAliveUntil) {
        let settled = false;
        void keepAliveUntil.finally(() => {
          settled = true;
        });
        while (!settled && !res.destroyed) {
          res.write(format === 'messages' ? ANTHROPIC_PING : ': keep-alive\n\n');
          await sleep(50);
        }
      }
      if (res.destroyed) return;
      if (fault === 'error-before-content') {
        res.end(STREAM_ERROR_EVENT[format]);
        return;
      }
      // Let the preamble reach the client, then cut the connection.
      await new Promise((resolve) => res.write('', resolve));
      await sleep(20);
      res.destroy();
      return;
    }
    for (const [index, event] of events.entries()) {
      if (res.destroyed) return;
      if (fault === 'broken-sse' && index === 3) {
        // Let the bytes so far reach the client, then cut the connection mid-event.
        await new Promise((resolve) =>
          res.write(event.slice(0, Math.floor(event.length / 2)), resolve),
        );
        await sleep(20);
        res.destroy();
        return;
      }
      if (fault === 'malformed-json' && index === 1) {
        res.write('data: {"not json\n\n');
        continue;
      }
      res.write(event);
      if (fault === 'hang-after-first-chunk' && index === PREAMBLE_EVENTS[format]) return;
      if (options.chunkDelayMs) await sleep(options.chunkDelayMs);
    }
    res.end();
  }

  /** Queues a job, or answers a poll: `in_progress` for the first polls, then the video. */
  function answerVideo(path: string, body: unknown, res: ServerResponse): void {
    const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<
      string,
      unknown
    >;
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (path.endsWith('/video/queue')) {
      const queueId = `job_${nextJob++}`;
      videoJobs.set(queueId, { polls: 0 });
      json(200, { queue_id: queueId, status: 'queued', model: fields.model });
      return;
    }
    const queueId = String(fields.queue_id ?? '');
    const job = videoJobs.get(queueId);
    if (!job) {
      json(404, { error: { message: `no job ${queueId}` } });
      return;
    }
    job.polls++;
    if (job.polls <= (options.videoPollsUntilDone ?? 1)) {
      json(200, { queue_id: queueId, status: 'in_progress' });
      return;
    }
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': TINY_MP4.length });
    res.end(TINY_MP4);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    baseUrl: `${url}/v1`,
    requests,
    configure(next) {
      options = { ...options, ...next };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
