/**
 * Which model a launched coding tool uses when the user names none: the default route
 * (`svc buyer route set`), else the best text model on the network that offers tool use
 * (docs/decisions/126-coding-tool-launchers.md).
 */

/** The catalog fields the choice reads (spec 2.3). */
export interface CatalogModel {
  id: string;
  type?: string;
  context_length?: number;
  max_output_tokens?: number;
  capabilities?: { tool_use?: boolean };
  peers?: Array<{ prices?: { outputUsdPerMillion?: number } }>;
}

/** The text models of a `GET /v1/models` answer (empty when it is not one). */
export function textModelsOf(body: unknown): CatalogModel[] {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return [];
  return data.filter(
    (entry): entry is CatalogModel =>
      typeof entry?.id === 'string' && (entry.type === undefined || entry.type === 'text'),
  );
}

function topOutputPrice(model: CatalogModel): number {
  return Math.max(0, ...(model.peers ?? []).map((peer) => peer.prices?.outputUsdPerMillion ?? 0));
}

/**
 * The best model for an agent: tool use first, then the largest context, then the dearest output
 * (price is the market's best available proxy for capability), then the name, so the choice is
 * stable.
 */
export function bestAgentModel(models: CatalogModel[]): CatalogModel | undefined {
  return [...models].sort(
    (a, b) =>
      Number(b.capabilities?.tool_use === true) - Number(a.capabilities?.tool_use === true) ||
      (b.context_length ?? 0) - (a.context_length ?? 0) ||
      topOutputPrice(b) - topOutputPrice(a) ||
      a.id.localeCompare(b.id),
  )[0];
}

/** The cheapest text model with tool use: what a tool's small/fast model slot gets. */
export function fastAgentModel(models: CatalogModel[]): CatalogModel | undefined {
  const capable = models.filter((model) => model.capabilities?.tool_use === true);
  return [...(capable.length > 0 ? capable : models)].sort(
    (a, b) => topOutputPrice(a) - topOutputPrice(b) || a.id.localeCompare(b.id),
  )[0];
}
