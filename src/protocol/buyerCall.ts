/**
 * The gateway → buyer contract when the buyer runs in the gateway's own process
 * (docs/decisions/180-gateway-runs-its-buyer.md): the gateway hands over typed values (the body it
 * already parsed, the identity, policy, cost cap and request id) instead of an HTTP request
 * with control headers, and gets the request's record back instead of reading headers and the
 * stream's usage comment. The remote mode (`--buyer-url`) carries the same values as the
 * control headers of src/protocol/headers.ts.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { RequestRecord } from './requestRecord.js';
import type { RoutingPolicyWire } from './routingPolicy.js';

/** One chat-completions, responses or messages request the gateway admitted. */
export interface BuyerCall {
  /** `/v1/chat/completions`, `/v1/responses` or `/v1/messages`. */
  path: string;
  /** The client's headers a seller may see: credentials, hop headers and every `x-svc-*` removed. */
  headers: IncomingHttpHeaders;
  /** The body as the gateway parsed and rewrote it (model, max tokens), and its bytes. */
  body: Record<string, unknown>;
  rawBody: Uint8Array;
  requestId: string;
  /** The buyer identity that pays, set from the key (never from the client). */
  identity: string;
  policy?: RoutingPolicyWire;
  /** Most the request may cost (a limited key's reservation), micro-USD. */
  maxCostMicro?: bigint;
  /** `<peer>@<service>` to pin, already checked against the key's policy. */
  pin?: string;
}

/** What the in-process buyer reports once the answer is over. */
export interface BuyerCallResult {
  /** The request's record; undefined when the buyer never got as far as writing one. */
  record: RequestRecord | undefined;
}

/**
 * A buyer the gateway calls in its own process: it writes the answer on `res` itself. Paths it
 * does not serve this way (media, token counting, the catalog) go to its loopback listener.
 */
export interface InProcessBuyer {
  serves(path: string): boolean;
  serve(call: BuyerCall, res: ServerResponse): Promise<BuyerCallResult>;
}
