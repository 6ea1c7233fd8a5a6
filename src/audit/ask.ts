/**
 * Sends one probe copy through the buyer's own proxy, so it takes the same send path, payment,
 * identity and format translation as any request (docs/decisions/164-...). The request goes out
 * with exactly the client headers of the request it was shaped from, in their order, over
 * `node:http` (given a header list, it adds none of its own); the control headers that pin the
 * seller, name the identity and mark the audit all start with `x-svc-`, and the buyer drops
 * every such header before any seller.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { formatOfProtocol } from '../formats/index.js';
import { type MicroUsd, parseUsd } from '../money/index.js';
import type { AnswerEvidence } from '../network/index.js';
import { MAX_ID_AGE_MS, SVC_HEADER } from '../protocol/index.js';
import { answerText, looksLikeStream } from './answerText.js';
import type { ProbeReply, ProbeRequest, SendProbe } from './probes.js';

export const AUDIT_HEADER = 'x-svc-audit';
/**
 * How long before it reaches the buyer an audit request's id is to be made (ms): as long before
 * as the copied request's was (a gateway makes its keys' ids before their reservation and the
 * hop), so the time in the id a seller sees stands as far from the request's arrival
 * (docs/decisions/223-key-order-and-id-time.md). Honoured only beside the auditor's marker.
 */
export const AUDIT_ID_AGE_HEADER = 'x-svc-audit-id-age';

/** The id age an audit request of this buyer (its `marker`) asks for, if any. */
export function auditIdAgeOf(headers: IncomingHttpHeaders, marker: string): number | undefined {
  const value = headers[AUDIT_ID_AGE_HEADER];
  if (typeof value !== 'string' || !/^-?[0-9]{1,8}$/.test(value)) return undefined;
  if (headers[AUDIT_HEADER] !== marker) return undefined;
  const age = Number(value);
  return Math.abs(age) <= MAX_ID_AGE_MS ? age : undefined;
}

/** Largest audit answer read. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;
/** Headers the proxy receives from node:http itself (or sets from the body). */
const HOP_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding']);

export interface ProxyTarget {
  /** The buyer's proxy, e.g. `http://127.0.0.1:8377`. */
  baseUrl: () => string;
  /** The buyer's audit marker (src/audit/auditor.ts). */
  marker: string;
  /** The gateway control secret, when one exists (needed for identities other than default). */
  controlSecret: () => string | undefined;
  /** The verified receipt and bytes the buyer kept for an audit request, taken by its id. */
  evidenceOf?: (requestId: string) => AnswerEvidence | undefined;
}

/** How long to wait for the evidence of an answer (checked once the answer is out). */
const EVIDENCE_WAIT_MS = 2_000;
/** Largest request or response kept with a verdict (a larger answer keeps its receipt only). */
const MAX_KEPT_BYTES = 512 * 1024;

async function evidenceFor(target: ProxyTarget, requestId: string, signal: AbortSignal) {
  const take = target.evidenceOf;
  if (!take) return undefined;
  const until = Date.now() + EVIDENCE_WAIT_MS;
  for (;;) {
    const found = take(requestId);
    if (found || Date.now() > until || signal.aborted) return found;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

/** The receipt and, when small enough to keep, the bytes it covers. */
export function keptEvidence(evidence: AnswerEvidence): Pick<ProbeReply, 'receipt' | 'evidence'> {
  const receipt = evidence.receipt as unknown as Record<string, unknown>;
  if (evidence.request.body.byteLength + evidence.response.body.byteLength > MAX_KEPT_BYTES) {
    return { receipt };
  }
  return {
    receipt,
    evidence: {
      request: {
        method: evidence.request.method,
        path: evidence.request.path,
        body: base64(evidence.request.body),
      },
      response: { status: evidence.response.status, body: base64(evidence.response.body) },
      sellerProtocol: evidence.sellerProtocol,
    },
  };
}

function rawHeaders(probe: ProbeRequest, target: ProxyTarget, host: string): string[] {
  // Given as a list, node:http adds no header of its own (not even Host).
  const out: string[] = ['host', host];
  for (const [name, value] of probe.headers) {
    if (!HOP_HEADERS.has(name) && !name.startsWith('x-svc-')) out.push(name, value);
  }
  out.push('content-length', String(probe.body.byteLength));
  out.push(SVC_HEADER.pinPeer, `${probe.peerId}@${probe.serviceId}`, AUDIT_HEADER, target.marker);
  out.push(SVC_HEADER.buyerIdentity, probe.identity);
  const secret = target.controlSecret();
  if (secret !== undefined) out.push(SVC_HEADER.gatewayAuth, secret);
  if (probe.maxCostUsd !== undefined) out.push(SVC_HEADER.maxCostUsd, probe.maxCostUsd);
  if (probe.idAgeMs !== undefined) out.push(AUDIT_ID_AGE_HEADER, String(probe.idAgeMs));
  return out;
}

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function exchange(url: URL, headers: string[], body: Uint8Array, signal: AbortSignal) {
  return new Promise<RawAnswer>((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers, signal }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.byteLength;
        if (size > MAX_ANSWER_BYTES) {
          res.destroy(new Error('audit answer too large'));
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', reject);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends probe copies through the buyer's proxy at `target`. */
export function sendThroughProxy(target: ProxyTarget): SendProbe {
  return async (probe, signal): Promise<ProbeReply> => {
    const url = new URL(probe.path, target.baseUrl());
    const answer = await exchange(url, rawHeaders(probe, target, url.host), probe.body, signal);
    if (answer.status !== 200) {
      throw new Error(
        `audit request to ${probe.peerId} answered ${answer.status}: ${answer.body.slice(0, 300)}`,
      );
    }
    // An answer counts for the seller probed only: a copy served by anyone else (a fallback the
    // pin should have prevented) would credit that seller with another's honesty.
    const servedBy = answer.headers[SVC_HEADER.peerId];
    if (servedBy !== probe.peerId) {
      throw new Error(`audit request to ${probe.peerId} was answered by ${String(servedBy)}`);
    }
    const stream = String(answer.headers['content-type'] ?? '').includes('text/event-stream');
    const { text, streamCostMicro } = answerText(probe.format, answer.body, stream);
    const costHeader = answer.headers[SVC_HEADER.estimatedCostUsd];
    const costMicro: MicroUsd =
      streamCostMicro ?? (typeof costHeader === 'string' ? parseUsd(costHeader) : 0n);
    const requestId = answer.headers[SVC_HEADER.requestId];
    const evidence =
      typeof requestId === 'string' ? await evidenceFor(target, requestId, signal) : undefined;
    if (!evidence) return { text, costMicro };
    if (evidence.peerId !== probe.peerId) {
      throw new Error(`audit request to ${probe.peerId} has evidence from ${evidence.peerId}`);
    }
    // The text compared is the one of the bytes the seller signed, in its own format, as anyone
    // checking the bundle reads it (src/audit/bundle.ts).
    const format = formatOfProtocol(evidence.sellerProtocol);
    const body = Buffer.from(evidence.response.body).toString('utf8');
    const own = format ? answerText(format, body, looksLikeStream(body)).text : text;
    return { text: own, costMicro, ...keptEvidence(evidence) };
  };
}
