/** `GET /v1/models` and `GET /v1/models/<id>`: the network-wide catalog. */
import type { ServerResponse } from 'node:http';
import {
  type CatalogOptions,
  catalogEntries,
  catalogEntry,
  closestModelNames,
  normalizeModelName,
  TYPE_FILTERS,
} from '../catalog/index.js';
import { SvcError } from '../errors/index.js';
import { jsonArrayPieces, sendJson, sendJsonPieces } from '../http/index.js';
import { preferenceExclusion } from '../routing/index.js';
import type { BuyerService } from './BuyerService.js';

function options(service: BuyerService): CatalogOptions {
  const prefs = service.ownPreferences;
  return {
    reputation: service.deps.reputation,
    health: service.health,
    preferFreeSellers: prefs.preferFreeSellers,
    speed: service.speed,
    audits: service.audits,
    admits: (offer, score) => preferenceExclusion(offer, prefs, score) === undefined,
  };
}

/** Lists the catalog, filtered by `?type=text|images|videos|decisions`. */
export function listModels(
  service: BuyerService,
  query: URLSearchParams,
  res: ServerResponse,
  allowedModels?: string[],
): void {
  const typeFilter = query.get('type');
  let type: string | undefined;
  if (typeFilter !== null) {
    type = TYPE_FILTERS[typeFilter];
    if (!type) {
      throw new SvcError('invalid_request', {
        message: `type must be one of ${Object.keys(TYPE_FILTERS).join(', ')}.`,
        details: { param: 'type' },
      });
    }
  }
  const allowed = allowedModels ? new Set(allowedModels.map(normalizeModelName)) : undefined;
  const entries = catalogEntries(service.offers(), options(service));
  const kept = (function* () {
    for (const entry of entries) {
      if (type !== undefined && entry.type !== type) continue;
      if (allowed !== undefined && !allowed.has(normalizeModelName(entry.id))) continue;
      yield entry;
    }
  })();
  sendJsonPieces(res, 200, jsonArrayPieces('{"object":"list","data":[', kept, ']}'));
}

/** One catalog entry by any spelling of its name. */
export function getModel(service: BuyerService, id: string, res: ServerResponse): void {
  const index = service.offers();
  const model = index.model(id);
  const entry = model ? catalogEntry(model, options(service)) : undefined;
  if (!entry) {
    const suggestions = closestModelNames(id, index.modelNames());
    throw new SvcError('not_found', {
      message: `No seller offers model "${id}".${suggestions.length ? ` Did you mean: ${suggestions.join(', ')}?` : ''}`,
      details: { model: id, didYouMean: suggestions },
    });
  }
  sendJson(res, 200, entry);
}
