/**
 * The bounds every public HTTP server of svc puts on a connection before any handler runs: how
 * long a client may take to send its headers and its whole request (not the answer), how long an
 * idle keep-alive connection stays, and one JSON error from the error table for what Node's HTTP
 * parser refuses (header floods, smuggled framing, malformed request lines, header timeouts).
 */
import type { Server } from 'node:http';
import { answerClientError } from '../errors/index.js';

export interface IngressTimeouts {
  /** All headers within this long (Node's default is 60 s). */
  headersTimeoutMs: number;
  /** The whole request, body included, within this long (Node's default is 5 min). */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long. */
  keepAliveTimeoutMs: number;
}

/**
 * The bounds of a public API server (gateway, tunnel relay): headers within 30 s, the whole
 * request within 120 s (docs/guide/gateway.md "Gateway"), idle keep-alive 65 s (longer than the usual 60 s of
 * load balancers in front, so they close first).
 */
export const API_INGRESS: IngressTimeouts = {
  headersTimeoutMs: 30_000,
  requestTimeoutMs: 120_000,
  keepAliveTimeoutMs: 65_000,
};

/** Applies the timeouts and answers parser errors; returns the server. */
export function boundIngress<S extends Server>(server: S, timeouts: IngressTimeouts): S {
  server.headersTimeout = timeouts.headersTimeoutMs;
  server.requestTimeout = timeouts.requestTimeoutMs;
  server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
  server.on('clientError', answerClientError);
  return server;
}
