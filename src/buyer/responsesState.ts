/**
 * Responses API state across sellers (docs/decisions/173-responses-state-kept-by-the-buyer.md):
 * a `/v1/responses` request's `previous_response_id` and `item_reference` items are checked
 * against the buyer's own store before routing (400 naming an unknown id), passed through to the
 * seller only when it speaks the responses format and holds them itself, and otherwise expanded
 * into the full input; the answer is kept for later turns unless the request says `store: false`.
 * Requests on other routes never reach this module.
 */
import { SvcError } from '../errors/index.js';
import type { RouteCandidate } from '../routing/index.js';
import type { ProxyContext } from './context.js';
import type { ResponseStore, StoredResponse } from './responseStore.js';

type Json = Record<string, unknown>;

/** Longest chain of `previous_response_id` links expanded (a bound on work per request). */
const MAX_CHAIN = 10_000;
/** Most `item_reference` items one request may hold (each is a lookup). */
const MAX_REFERENCES = 4_096;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An `item_reference` input item (its `type` may be left out). */
function isReference(item: Json): boolean {
  return (
    item.type === 'item_reference' ||
    (item.type === undefined && item.role === undefined && typeof item.id === 'string')
  );
}

function previousNotFound(id: string, earlier: boolean): SvcError {
  return new SvcError('previous_response_not_found', {
    message: earlier
      ? `Response '${id}', an earlier response of the previous_response_id chain, is no longer kept by the buyer. Send the whole conversation as input instead.`
      : `Previous response with id '${id}' not found. The buyer keeps the responses it returned (buyer.responseStore) for the identity that asked; send the whole conversation as input instead.`,
    details: { param: 'previous_response_id', id },
  });
}

function itemNotFound(id: string, param: string): SvcError {
  return new SvcError('response_item_not_found', {
    message: `Item with id '${id}' not found. The buyer keeps the items of the responses it returned (buyer.responseStore) for the identity that asked; send the item itself instead of an item_reference.`,
    details: { param, id },
  });
}

/**
 * An earlier item as input for a seller that does not hold it: a reasoning item without its
 * encrypted content cannot be replayed anywhere (translation drops it too), so it is left out.
 */
function replayable(item: Json): Json | undefined {
  if (item.type === 'reasoning' && typeof item.encrypted_content !== 'string') return undefined;
  return item;
}

/** The state one `/v1/responses` request refers to, and the keeping of its answer. */
export class ResponsesState {
  /** Responses read for this request, by id. */
  private readonly read = new Map<string, StoredResponse>();
  /** Item id -> the id of the response holding it, as read for this request. */
  private readonly owners = new Map<string, string>();
  private readonly previous: StoredResponse | undefined;
  /** The seller holding everything referred to, when one does. */
  private readonly holder: { peerId: string; serviceId: string } | undefined;
  private readonly refersToState: boolean;
  private expanded: Json[] | undefined;

  constructor(
    private readonly store: ResponseStore,
    private readonly identity: string,
    private readonly body: Json,
    private readonly clock: () => number,
    /** Most bytes of kept turns one expansion may carry (`buyer.bodyLimitBytes`). */
    private readonly maxExpandedBytes = Number.POSITIVE_INFINITY,
  ) {
    const previousId = body.previous_response_id;
    if (typeof previousId === 'string') {
      this.previous = this.response(previousId);
      if (!this.previous) throw previousNotFound(previousId, false);
    } else if (previousId !== undefined && previousId !== null) {
      throw new SvcError('invalid_request', {
        message: 'previous_response_id: must be a string (the id of an earlier response).',
        details: { param: 'previous_response_id' },
      });
    }
    const owners = this.referenceOwners();
    const referred = [...(this.previous ? [this.previous] : []), ...owners];
    this.refersToState = referred.length > 0;
    const first = referred[0];
    if (
      first &&
      referred.every((r) => r.held && r.peerId === first.peerId && r.serviceId === first.serviceId)
    ) {
      this.holder = { peerId: first.peerId, serviceId: first.serviceId };
    }
  }

  /** True when the answer is kept (the request did not say `store: false`). */
  get keeps(): boolean {
    return this.body.store !== false;
  }

  /** The seller that served what this request continues (routing prefers it). */
  get affinityPeerId(): string | undefined {
    return this.previous?.peerId;
  }

  /**
   * The body `candidate` gets: unchanged when nothing is referred to or the candidate holds it
   * all; otherwise the whole conversation as input, without `previous_response_id`.
   */
  bodyFor(candidate: RouteCandidate, body: Json): Json {
    if (!this.refersToState) return body;
    const { offer } = candidate;
    if (
      candidate.sellerProtocol === 'openai-responses' &&
      this.holder?.peerId === offer.peerId &&
      this.holder.serviceId === offer.serviceId
    ) {
      return body;
    }
    this.expanded ??= this.expand();
    const { previous_response_id: _previous, ...rest } = body;
    return { ...rest, input: this.expanded };
  }

  /**
   * Keeps the answer `response` (the response object the client received) unless the request
   * said `store: false` or the response failed. Runs after the answer was delivered.
   */
  remember(candidate: RouteCandidate, response: unknown): void {
    if (!this.keeps || !isRecord(response)) return;
    if (typeof response.id !== 'string') return;
    if (response.status !== 'completed' && response.status !== 'incomplete') return;
    const previousId = this.body.previous_response_id;
    this.store.keep(this.identity, {
      id: response.id,
      previousId: typeof previousId === 'string' ? previousId : undefined,
      input: this.ownInput(),
      output: Array.isArray(response.output) ? response.output.filter(isRecord) : [],
      peerId: candidate.offer.peerId,
      serviceId: candidate.offer.serviceId,
      held: candidate.sellerProtocol === 'openai-responses' && response.store === true,
      at: this.clock(),
    });
  }

  private ownInput(): Json[] {
    const { input } = this.body;
    if (typeof input === 'string') return [{ role: 'user', content: input }];
    return Array.isArray(input) ? input.filter(isRecord) : [];
  }

  private response(id: string): StoredResponse | undefined {
    let found = this.read.get(id);
    if (!found) {
      found = this.store.get(this.identity, id);
      if (found) this.read.set(id, found);
    }
    return found;
  }

  /** The responses holding the items the request's own input refers to (400 for an unknown id). */
  private referenceOwners(): StoredResponse[] {
    const { input } = this.body;
    if (!Array.isArray(input)) return [];
    const owners: StoredResponse[] = [];
    for (let i = 0; i < input.length; i++) {
      const item: unknown = input[i];
      if (!isRecord(item) || !isReference(item)) continue;
      if (owners.length === MAX_REFERENCES) {
        throw new SvcError('invalid_request', {
          message: `input: more than ${MAX_REFERENCES} item_reference items. Send the items themselves instead.`,
          details: { param: 'input' },
        });
      }
      const id = item.id;
      if (typeof id !== 'string') {
        throw new SvcError('invalid_request', {
          message: `input[${i}].id: an item_reference needs the id (a string) of an earlier item.`,
          details: { param: `input[${i}].id` },
        });
      }
      const owner = this.ownerOf(id);
      if (!owner) throw itemNotFound(id, `input[${i}].id`);
      owners.push(owner);
    }
    return owners;
  }

  private ownerOf(itemId: string): StoredResponse | undefined {
    let ownerId = this.owners.get(itemId);
    if (ownerId === undefined) {
      ownerId = this.store.ownerOfItem(this.identity, itemId);
      if (ownerId !== undefined) this.owners.set(itemId, ownerId);
    }
    return ownerId === undefined ? undefined : this.response(ownerId);
  }

  /** Item references replaced by the items (400 for an item no longer kept). */
  private resolve(items: Json[], param: string): Json[] {
    const out: Json[] = [];
    for (let i = 0; i < items.length; i++) {
      let item: Json | undefined = items[i]!;
      if (isReference(item)) {
        const id = String(item.id);
        const owner = this.ownerOf(id);
        item =
          owner && [...owner.input, ...owner.output].find((o) => o.id === id && !isReference(o));
        if (!item) throw itemNotFound(id, `${param}[${i}].id`);
      }
      const kept = replayable(item);
      if (kept) out.push(kept);
    }
    return out;
  }

  /** The whole conversation: every earlier turn's input and output, then this request's input. */
  private expand(): Json[] {
    const chain: StoredResponse[] = [];
    let bytes = 0;
    for (let link = this.previous; link; ) {
      chain.push(link);
      bytes += link.bytes ?? 0;
      if (bytes > this.maxExpandedBytes) {
        throw new SvcError('body_too_large', {
          message: `previous_response_id: the conversation it continues is larger than buyer.bodyLimitBytes (${this.maxExpandedBytes} bytes) and cannot be sent to a seller that does not hold it. Send a shorter conversation as input instead.`,
          details: { param: 'previous_response_id', limitBytes: this.maxExpandedBytes },
        });
      }
      if (chain.length > MAX_CHAIN) {
        throw new SvcError('invalid_request', {
          message: `previous_response_id: the chain is longer than ${MAX_CHAIN} responses. Send the whole conversation as input instead.`,
          details: { param: 'previous_response_id' },
        });
      }
      if (link.previousId === undefined) break;
      const earlier = this.response(link.previousId);
      if (!earlier) throw previousNotFound(link.previousId, true);
      link = earlier;
    }
    const items: Json[] = [];
    for (const link of chain.reverse()) {
      items.push(...this.resolve(link.input, 'input'));
      for (const item of link.output) {
        const kept = replayable(item);
        if (kept) items.push(kept);
      }
    }
    items.push(...this.resolve(this.ownInput(), 'input'));
    return items;
  }
}

/**
 * The responses state of a request, or undefined: not a `/v1/responses` request, or a buyer that
 * keeps nothing (`buyer.responseStore.maxBytes` 0: ids then go to the seller as they came).
 * Throws 400 `previous_response_not_found` / `response_item_not_found` for an unknown id.
 */
export function openResponsesState(ctx: ProxyContext): ResponsesState | undefined {
  if (ctx.request.route.protocol !== 'openai-responses') return undefined;
  const { service } = ctx;
  if (!service.responses.enabled) return undefined;
  const { deps } = service;
  return new ResponsesState(
    service.responses,
    ctx.request.access.identity,
    ctx.request.body,
    deps.clock,
    deps.config.bodyLimitBytes,
  );
}
