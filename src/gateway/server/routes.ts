/** The gateway's routes. Anything else is 404. */

export type RouteKind = 'models' | 'key' | 'topup' | 'proxy';

export interface Route {
  kind: RouteKind;
  /** Reserves and settles a budget (free routes never touch budgets). */
  billed: boolean;
}

const ROUTES: Record<string, Route> = {
  'GET /v1/models': { kind: 'models', billed: false },
  'GET /v1/key': { kind: 'key', billed: false },
  'POST /v1/key/topup': { kind: 'topup', billed: false },
  'POST /v1/chat/completions': { kind: 'proxy', billed: true },
  'POST /v1/responses': { kind: 'proxy', billed: true },
  'POST /v1/messages': { kind: 'proxy', billed: true },
  'POST /v1/messages/count_tokens': { kind: 'proxy', billed: false },
  'POST /v1/images/generations': { kind: 'proxy', billed: true },
  'POST /v1/images/edits': { kind: 'proxy', billed: true },
};

/** The route of `method path`, or undefined. */
export function matchRoute(method: string, path: string): Route | undefined {
  return ROUTES[`${method} ${path}`];
}
