/**
 * Sends one probe copy through the buyer's own proxy, so it takes the same send path, payment,
 * identity and format translation as any request (docs/decisions/164-...). The request goes out
 * with exactly the client headers of the request it was shaped from, in their order, over
 * `node:http` (given a header list, it adds none of its own); the control headers that pin the
 * seller, name the identity and mark the audit all start with `x-svc-`, and the buyer drops
 * every such header before any seller.
 */
import { request as httpRequest } from 'node:http';
import { type MicroUsd, parseUsd } from '../money/index.js';
import { SVC_HEADER } from '../protocol/index.js';
import { answerText } from './answerText.js';
import type { ProbeReply, ProbeRequest, SendProbe } from './auditor.js';

export const AUDIT_HEADER = 'x-svc-audit';

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
  /** The seller's receipt kept for an audit request, by its request id, when there is one. */
  receiptOf?: (requestId: string) => Record<string, unknown> | undefined;
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
    const stream = String(answer.headers['content-type'] ?? '').includes('text/event-stream');
    const { text, streamCostMicro } = answerText(probe.format, answer.body, stream);
    const costHeader = answer.headers[SVC_HEADER.estimatedCostUsd];
    const costMicro: MicroUsd =
      streamCostMicro ?? (typeof costHeader === 'string' ? parseUsd(costHeader) : 0n);
    const requestId = answer.headers[SVC_HEADER.requestId];
    const receipt = typeof requestId === 'string' ? target.receiptOf?.(requestId) : undefined;
    return { text, costMicro, ...(receipt ? { receipt } : {}) };
  };
}
