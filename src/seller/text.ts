/**
 * The text variant of the seller pipeline (chat, responses, messages, and images billed by
 * tokens): the demo's answer, or the upstream's relayed with the model rewritten, metered on the
 * way back. The trailer claims the usage; after a failure once the head is out (a broken or cut
 * stream, a malformed event, an error event) it also carries `error: "upstream_error: <reason>"`.
 */

import { isFailedAnswer, wholeAnswerFinished } from '../formats/index.js';
import { maxCostOfRequest, toPriceMicro } from '../money/index.js';
import type { InboundRequest, OutboundReply, SellerTrailer } from '../network/index.js';
import { demoAnswer } from './demo.js';
import type { Admission, Admitted, Billing } from './pipeline/admission.js';
import type { Json, SellerBody, SellerRoute } from './pipeline/route.js';
import {
  callUpstream,
  readUpstreamBody,
  type UpstreamAnswer,
  upstreamJson,
  upstreamPayload,
  upstreamUrl,
} from './pipeline/upstream.js';
import { type MeterResult, UsageMeter, usageFromJson } from './usage.js';

const encoder = new TextEncoder();
const DEFAULT_MAX_OUTPUT_TOKENS = 4096;
/** Largest non-streaming upstream answer buffered. */
const MAX_UPSTREAM_JSON_BYTES = 64 * 1024 * 1024;
/** The trailer's `error` is bounded on the wire; a reason is cut well below that. */
const MAX_TRAILER_ERROR_CHARS = 1000;

function requestedMaxOutput(body: Json): number | undefined {
  for (const field of ['max_completion_tokens', 'max_tokens', 'max_output_tokens']) {
    const value = body[field];
    if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  }
  return undefined;
}

/** Token pricing, bounded by the request's size and its largest answer. */
export function textBilling(
  request: InboundRequest,
  body: SellerBody,
  route: SellerRoute,
): Billing {
  const pricing = route.service.pricing ?? route.provider.config.defaultPricing;
  const price = toPriceMicro(pricing);
  const maxOutput =
    requestedMaxOutput(body.json) ??
    route.service.capabilities?.maxOutputTokens ??
    DEFAULT_MAX_OUTPUT_TOKENS;
  return {
    pricing,
    price,
    maxCost: maxCostOfRequest(Math.ceil(request.body.byteLength / 2), maxOutput, price),
  };
}

/** The trailer of a finished body: the usage billed, and the failure when there was one. */
async function finishTrailer(
  admission: Admission,
  result: MeterResult,
  bodyError?: Error,
  finished = result.complete,
): Promise<SellerTrailer> {
  admission.release();
  let trailer: SellerTrailer = {};
  // A failed answer bills nothing; the buyer applies the same rule (src/formats/failedAnswer.ts).
  const failed =
    !result.usage ||
    isFailedAnswer({
      outputTokens: result.usage.outputTokens,
      finished,
      ...(result.content === undefined ? {} : { content: result.content }),
    });
  if (result.usage && !failed) trailer = await admission.bill(result.usage);
  else await admission.billNothing();
  const error = bodyError?.message ?? result.error;
  if (error !== undefined)
    trailer.error = `upstream_error: ${error}`.slice(0, MAX_TRAILER_ERROR_CHARS);
  return trailer;
}

async function demoReply({ request, body, route, admission }: Admitted): Promise<OutboundReply> {
  // A demo service's `upstreamModel` names the weights it answers with (the model it serves).
  const weights = route.service.upstreamModel ?? route.model;
  const answer = await demoAnswer(route.protocol, route.model, body.json, request.body.byteLength, {
    weights,
  });
  return {
    status: answer.status,
    headers: { 'content-type': answer.contentType },
    body:
      body.json.stream === true
        ? (async function* () {
            for (const part of answer.parts) yield encoder.encode(part);
          })()
        : encoder.encode(answer.parts.join('')),
    trailer: (bodyError) =>
      finishTrailer(admission, { usage: answer.usage, complete: true }, bodyError),
  };
}

/** Chat streams are asked for their usage chunk: the seller bills from it. */
function usageRequest(body: SellerBody, route: SellerRoute): Json {
  if (route.protocol !== 'openai-chat-completions' || body.json.stream !== true) return {};
  const options = body.json.stream_options as Json | undefined;
  // The buyer asks already (src/formats withStreamUsage): the body is relayed as it came.
  if (options?.include_usage === true) return {};
  return {
    stream_options: {
      ...((body.json.stream_options as Json | undefined) ?? {}),
      include_usage: true,
    },
  };
}

/** A stream passed through chunk by chunk, metered; the slot is freed when it ends. */
function streamReply(
  answer: UpstreamAnswer,
  meter: UsageMeter,
  admission: Admission,
): OutboundReply {
  const source = answer.body;
  return {
    status: answer.status,
    headers: answer.headers,
    body: (async function* () {
      // Metered after the chunk is handed on, so the meter never delays the bytes; a chunk
      // handed on when the stream stops early is metered in `finally`.
      let pending: Uint8Array | undefined;
      try {
        for await (const chunk of source) {
          pending = chunk;
          yield chunk;
          pending = undefined;
          meter.push(chunk);
        }
      } finally {
        if (pending !== undefined) meter.push(pending);
        admission.release();
      }
    })(),
    trailer: (bodyError) => finishTrailer(admission, meter.finish(), bodyError),
  };
}

async function relayReply(admitted: Admitted): Promise<OutboundReply> {
  const { request, body, route, admission } = admitted;
  const { provider } = route;
  const answer = await callUpstream({
    kind: provider.kind,
    url: upstreamUrl(provider.baseUrl ?? '', request.path),
    apiKey: provider.apiKey,
    headers: request.headers,
    body: upstreamPayload(request, body, route, usageRequest(body, route)),
    contentType: body.boundary !== undefined ? (body.contentType ?? '') : 'application/json',
    signal: request.signal,
  });
  const streaming = answer.status === 200 && answer.contentType.includes('text/event-stream');
  if (streaming) return streamReply(answer, new UsageMeter(route.protocol, true), admission);
  const whole = await readUpstreamBody(answer, MAX_UPSTREAM_JSON_BYTES);
  if (answer.status < 200 || answer.status >= 300) {
    // The buyer's own mistake (400, 404, 422...): passed through, nothing billed.
    admission.release();
    await admission.billNothing();
    return { status: answer.status, headers: answer.headers, body: whole, trailer: () => ({}) };
  }
  // Whole answer known: parsed once, for its usage and its finish, and sent in one go (the slot
  // is freed in the trailer).
  const json = upstreamJson(whole);
  const usage = usageFromJson(route.protocol, json);
  const metered: MeterResult = { ...(usage ? { usage } : {}), complete: true };
  const finished = wholeAnswerFinished(route.protocol, json);
  return {
    status: answer.status,
    headers: answer.headers,
    body: whole,
    trailer: (bodyError) => finishTrailer(admission, metered, bodyError, finished),
  };
}

/** Serves an admitted text request: the demo's answer or the upstream's. */
export function serveText(admitted: Admitted): Promise<OutboundReply> | OutboundReply {
  if (admitted.route.provider.config.type === 'demo') return demoReply(admitted);
  return relayReply(admitted);
}
