/** `GET /v1/models`: the buyer's catalog, limited to the models the key may use. Free. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { SvcError } from '../../errors/index.js';
import { readStreamBody, sendJson, writeChunk } from '../../http/index.js';
import { encodeControlHeaders } from '../../protocol/index.js';
import { modelAllowed } from '../policy/mergePolicies.js';
import type { Caller } from './authenticate.js';
import type { GatewayDeps } from './deps.js';
import { forwardHeaders, responseHeaders } from './forwardHeaders.js';
import { MAX_CATALOG_BYTES } from './priceBook.js';
import type { LogFacts } from './requestLog.js';
import { resolvePolicy } from './resolvePolicy.js';

interface CatalogEntry {
  id?: unknown;
  aliases?: unknown;
}

/**
 * Answers the catalog, filtered by the merged policy's model list. A key that may use every model
 * gets the buyer's bytes as they come, unparsed: with a thousand sellers the catalog is large, and
 * parsing it per call only to write it again cost the gateway time and memory for nothing.
 */
export async function listModels(
  deps: GatewayDeps,
  caller: Caller,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<LogFacts> {
  const { policy } = await resolvePolicy(deps.store, caller, undefined);
  let upstream: Dispatcher.ResponseData;
  try {
    upstream = await deps.buyer.request({
      method: 'GET',
      path: req.url ?? '/v1/models',
      headers: forwardHeaders(
        req.headers,
        encodeControlHeaders({
          buyerIdentity: caller.workspace.identity,
          gatewayAuth: deps.controlSecret,
        }),
      ),
    });
  } catch (error) {
    throw new SvcError('buyer_unavailable', { cause: error });
  }
  const status = upstream.statusCode;
  if (!policy.allowedModels) {
    await passThrough(upstream, res);
    return { status };
  }
  let catalog: { data?: CatalogEntry[] } & Record<string, unknown>;
  try {
    const bytes = await readStreamBody(upstream.body, MAX_CATALOG_BYTES);
    catalog = JSON.parse(bytes.toString('utf8')) as typeof catalog;
  } catch (error) {
    throw new SvcError('buyer_unavailable', { cause: error });
  }
  if (Array.isArray(catalog.data)) {
    catalog.data = catalog.data.filter(
      (entry) =>
        modelAllowed(policy, String(entry.id)) ||
        (Array.isArray(entry.aliases) &&
          entry.aliases.some((alias) => modelAllowed(policy, String(alias)))),
    );
  }
  sendJson(res, status, catalog);
  return { status };
}

/** The buyer's answer to the client as it comes; a buyer that breaks mid-way cuts the client. */
async function passThrough(upstream: Dispatcher.ResponseData, res: ServerResponse): Promise<void> {
  res.writeHead(upstream.statusCode, responseHeaders(upstream.headers));
  try {
    for await (const chunk of upstream.body) {
      if (!(await writeChunk(res, chunk as Buffer))) break;
    }
    if (!res.destroyed) res.end();
  } catch {
    // Mid-answer there is no way to send an error: close the connection so the client sees it.
    res.destroy();
  }
  if (!upstream.body.destroyed) upstream.body.destroy();
}
