/** `GET /v1/models`: the buyer's catalog, limited to the models the key may use. Free. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SvcError } from '../../errors/index.js';
import { sendJson } from '../../http/index.js';
import { encodeControlHeaders } from '../../protocol/index.js';
import { modelAllowed } from '../policy/mergePolicies.js';
import type { Caller } from './authenticate.js';
import type { GatewayDeps } from './deps.js';
import { forwardHeaders } from './forwardHeaders.js';
import type { LogFacts } from './requestLog.js';
import { resolvePolicy } from './resolvePolicy.js';

interface CatalogEntry {
  id?: unknown;
  aliases?: unknown;
}

/** Answers the catalog, filtered by the merged policy's model list. */
export async function listModels(
  deps: GatewayDeps,
  caller: Caller,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<LogFacts> {
  const { policy } = await resolvePolicy(deps.store, caller, undefined);
  let catalog: { data?: CatalogEntry[] } & Record<string, unknown>;
  let status: number;
  try {
    const upstream = await deps.buyer.request({
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
    status = upstream.statusCode;
    catalog = (await upstream.body.json()) as typeof catalog;
  } catch (error) {
    throw new SvcError('buyer_unavailable', { cause: error });
  }
  if (policy.allowedModels && Array.isArray(catalog.data)) {
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
