/**
 * `POST /v1/key/topup`: hands the authenticated key to the x402 TopupService
 * (src/x402) and copies its reply — status, PAYMENT-REQUIRED / PAYMENT-RESPONSE headers, body.
 * The key's own rules (403) come first, then this gateway's set-up (501), then its wallet (400).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SvcError } from '../../errors/index.js';
import { parseJsonObject, readBody } from '../../http/index.js';
import { checkTopupAllowed, PAYMENT_SIGNATURE_HEADER } from '../../x402/index.js';
import type { Caller } from './authenticate.js';
import type { GatewayDeps } from './deps.js';
import type { LogFacts } from './requestLog.js';

const TOPUP_BODY_LIMIT_BYTES = 16 * 1024;

/** Browsers may read the x402 headers (x402 clients in web pages). */
const EXPOSE = { 'access-control-expose-headers': 'PAYMENT-REQUIRED, PAYMENT-RESPONSE' };

export async function topupRoute(
  deps: GatewayDeps,
  caller: Caller,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<LogFacts> {
  const ownWallet = caller.key.ownIdentity;
  checkTopupAllowed({ ownWallet, topupEnabled: caller.key.topupEnabled });
  if (!deps.topups) throw new SvcError('topup_not_implemented');
  const raw = await readBody(req, TOPUP_BODY_LIMIT_BYTES);
  const body = raw.length === 0 ? {} : parseJsonObject(raw);
  const walletAddress = deps.buyerAddress(caller.key.identity);
  if (!/^0x[0-9a-fA-F]{40}$/.test(walletAddress)) {
    throw new SvcError('identity_error', {
      message: `The wallet of identity "${caller.key.identity}" cannot be loaded, so it cannot receive a top-up.`,
    });
  }
  const signature = req.headers[PAYMENT_SIGNATURE_HEADER.toLowerCase()];
  const origin = deps.forwarded.origin(req);
  const reply = await deps.topups.handle({
    key: {
      keyId: caller.key.id,
      identity: caller.key.identity,
      ownWallet,
      walletAddress: walletAddress as `0x${string}`,
      topupEnabled: caller.key.topupEnabled,
    },
    body,
    paymentSignature: typeof signature === 'string' ? signature : undefined,
    resourceUrl: `${origin.proto}://${origin.host}${origin.prefix}/v1/key/topup`,
  });
  const text = JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    ...reply.headers,
    ...EXPOSE,
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
  const code = (reply.body as { error?: { code?: unknown } }).error?.code;
  return { status: reply.status, errorCode: typeof code === 'string' ? code : null };
}
