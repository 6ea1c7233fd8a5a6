import { describe, expect, it } from 'vitest';
import { OfferIndex, staticReputation } from '../catalog/index.js';
import { peerIdFor, peerRecord } from '../catalog/testing/peerRecord.js';
import { defaultConfig } from '../config/index.js';
import { isSvcError, type SvcError } from '../errors/index.js';
import { TransportError } from '../network/index.js';
import { AffinityStore, conversationKey } from './affinity.js';
import { actionForStatus, actionForTransportError, retryAfterMs } from './failover.js';
import { HealthTracker } from './health.js';
import {
  narrowPreferences,
  ownPreferences,
  parseGatewayPolicy,
  pinPreferences,
} from './preferences.js';
import { passThroughProtocol, type RouteRequest, selectRoute } from './selectRoute.js';

const [A, B, C, D, E] = ['a', 'b', 'c', 'd', 'e'].map(peerIdFor) as [
  string,
  string,
  string,
  string,
  string,
];
const price = (input: number, output: number, cached?: number) => ({
  inputUsdPerMillion: input,
  outputUsdPerMillion: output,
  ...(cached === undefined ? {} : { cachedInputUsdPerMillion: cached }),
});

const index = OfferIndex.fromPeers([
  peerRecord({ peerId: 'a', services: [{ id: 'gpt-4o', pricing: price(2, 8, 1) }] }),
  peerRecord({
    peerId: 'b',
    services: [{ id: 'openai/gpt-4o-2024-08-06', pricing: price(1, 4, 0.5) }],
  }),
  peerRecord({ peerId: 'c', services: [{ id: 'GPT-4o', pricing: price(1, 4) }] }),
  peerRecord({ peerId: 'd', services: [{ id: 'gpt-4o', pricing: price(0, 0) }] }),
  peerRecord({
    peerId: 'e',
    services: [
      { id: 'gpt-4o', pricing: price(0.5, 1), protocols: ['anthropic-messages'] },
      { id: 'gpt-image-1', categories: ['image'], protocols: ['openai-images'] },
    ],
  }),
]);
const reputation = staticReputation({ [A]: 90, [B]: 70, [C]: 95, [D]: 50, [E]: 99 });
const own = ownPreferences(defaultConfig().buyer.routingPreferences);

function route(overrides: Partial<RouteRequest> = {}) {
  return selectRoute({
    target: { kind: 'automatic', model: 'gpt-4o' },
    routeType: 'text',
    clientProtocol: 'openai-chat-completions',
    chooseProtocol: passThroughProtocol,
    index,
    preferences: own,
    reputation,
    ...overrides,
  });
}
const order = (plan: ReturnType<typeof route>) => plan.candidates.map((c) => c.offer.peerId);

function thrown(fn: () => unknown): SvcError {
  try {
    fn();
  } catch (error) {
    if (isSvcError(error)) return error;
    throw error;
  }
  throw new Error('expected an SvcError');
}

describe('selectRoute (automatic)', () => {
  it('ranks cheapest first; trust (halved without a cached price) breaks the tie; drops low trust and the wrong protocol', () => {
    // B and C both cost 1+4; C (95) omits the cached price others advertise -> 47.5 < B's 70.
    // D is free but scores 50 < 60; E speaks only anthropic-messages.
    expect(order(route())).toEqual([B, C, A]);
  });

  it('rewrites to each seller own service id', () => {
    expect(route().candidates.map((c) => c.offer.serviceId)).toEqual([
      'openai/gpt-4o-2024-08-06',
      'GPT-4o',
      'gpt-4o',
    ]);
  });

  it('admits unscored and low-trust sellers only when minTrustScore is 0, then free sellers lead', () => {
    const prefs = { ...own, minTrustScore: 0 };
    expect(order(route({ preferences: prefs }))[0]).toBe(D);
    expect(order(route({ preferences: { ...prefs, preferFreeSellers: true } }))[0]).toBe(D);
  });

  it('applies price caps, block lists and allow lists', () => {
    const capped = narrowPreferences(own, { maxPricing: { outputUsdPerMillion: 5 } });
    expect(order(route({ preferences: capped }))).toEqual([B, C]);
    const blocked = narrowPreferences(own, { blockedPeerIds: [B] });
    expect(order(route({ preferences: blocked }))).toEqual([C, A]);
    const allowed = narrowPreferences(own, { allowedPeerIds: [`0x${A.toUpperCase()}`] });
    expect(order(route({ preferences: allowed }))).toEqual([A]);
  });

  it('penalises recent failures and puts cooling-down sellers last', () => {
    let now = 0;
    const health = new HealthTracker(() => now, { coolDownAfter: 2, coolDownMs: 1000 });
    health.recordFailure(B);
    // B's 70 - 10 penalty = 60 still beats C's 47.5.
    expect(order(route({ health }))).toEqual([B, C, A]);
    health.recordFailure(B);
    expect(order(route({ health }))).toEqual([C, A, B]);
    now = 2000;
    // Cool-down over; B carries a 20 point penalty: 50 still above 47.5.
    expect(order(route({ health }))).toEqual([B, C, A]);
  });

  it('prefers the affinity seller while it is eligible', () => {
    const plan = route({ affinityPeerId: A });
    expect(order(plan)).toEqual([A, B, C]);
    expect(plan.affinityUsed).toBe(true);
    const blocked = narrowPreferences(own, { blockedPeerIds: [A] });
    expect(order(route({ affinityPeerId: A, preferences: blocked }))[0]).toBe(B);
  });

  it('answers model_not_found with every exclusion reason and did-you-mean names', () => {
    const error = thrown(() =>
      route({ preferences: narrowPreferences(own, { minTrustScore: 100 }) }),
    );
    expect(error.code).toBe('model_not_found');
    expect(error.status).toBe(502);
    const excluded = error.details!.excluded as Array<{ peerId: string; reason: string }>;
    expect(excluded.find((e) => e.peerId === D)!.reason).toBe('trust score 50 below minimum 100');
    expect(excluded.find((e) => e.peerId === E)!.reason).toContain('not openai-chat-completions');
    const typo = thrown(() => route({ target: { kind: 'automatic', model: 'gpt-4oo' } }));
    expect(typo.details!.didYouMean).toContain('gpt-4o');
    expect(typo.message).toContain('Did you mean: gpt-4o');
  });

  it('refuses a model of the wrong type for the route', () => {
    const error = thrown(() => route({ target: { kind: 'automatic', model: 'gpt-image-1' } }));
    expect(error.code).toBe('model_type_mismatch');
  });

  it('keeps only the best candidates', () => {
    expect(route({ maxCandidates: 2 }).candidates).toHaveLength(2);
  });

  it('sets a seller failed by audits aside: it keeps no better seller out of the top candidates', () => {
    const audits = {
      audit: (peerId: string) =>
        peerId === B ? { verdict: 'failed' as const, audits: 2, disagreements: 2 } : undefined,
    };
    // B is the cheapest; failed, it is only a fallback after A and C, even with two candidates.
    expect(order(route({ audits }))).toEqual([C, A, B]);
    expect(order(route({ audits, maxCandidates: 2 }))).toEqual([C, A]);
  });
});

describe('selectRoute (sellers marked unreachable)', () => {
  // A and C sell gpt-4o; B sells it under another name. Each mark is a guess from a past dial.
  const marked = (reachable: { a: boolean; c: boolean }) =>
    OfferIndex.fromPeers([
      peerRecord({
        peerId: 'a',
        reachable: reachable.a,
        services: [{ id: 'gpt-4o', pricing: price(2, 8) }],
      }),
      peerRecord({
        peerId: 'c',
        reachable: reachable.c,
        services: [{ id: 'gpt-4o', pricing: price(1, 4) }],
      }),
    ]);

  it('tries every eligible seller anyway, best first, when all of them are marked', () => {
    const plan = route({
      index: marked({ a: false, c: false }),
      maxCandidates: 1,
      spareCandidates: 1,
    });
    expect(order(plan)).toEqual([C]);
    expect(plan.spares?.map((c) => c.offer.peerId)).toEqual([A]);
  });

  it('never tries a marked seller while another one is eligible', () => {
    const plan = route({ index: marked({ a: false, c: true }), spareCandidates: 3 });
    expect(order(plan)).toEqual([C]);
    expect(plan.spares ?? []).toEqual([]);
  });

  it('still refuses a marked seller that the preferences exclude', () => {
    const error = thrown(() =>
      route({
        index: marked({ a: false, c: false }),
        preferences: narrowPreferences(own, { blockedPeerIds: [A, C] }),
      }),
    );
    expect(error.code).toBe('model_not_found');
  });
});

describe('selectRoute (pinned)', () => {
  it('routes a pin to that seller even below the trust gate, and never lists another', () => {
    const plan = route({
      preferences: pinPreferences(own, undefined),
      target: { kind: 'pinned', peerId: D, model: 'gpt-4o', source: 'model' },
    });
    expect(plan.pinned).toBe(true);
    expect(order(plan)).toEqual([D]);
  });

  it('names an unknown peer', () => {
    const error = thrown(() =>
      route({
        target: { kind: 'pinned', peerId: peerIdFor('z'), model: 'gpt-4o', source: 'header' },
      }),
    );
    expect(error.code).toBe('peer_unreachable');
    expect(error.message).toContain(peerIdFor('z'));
    expect(error.message).toContain('svc network browse');
  });

  it('applies a gateway policy to pins', () => {
    const policy = pinPreferences(own, { blockedPeerIds: [D] });
    const error = thrown(() =>
      route({
        preferences: policy,
        target: { kind: 'pinned', peerId: D, model: 'gpt-4o', source: 'model' },
      }),
    );
    expect(error.code).toBe('model_not_found');
    const models = pinPreferences(own, { allowedModels: ['claude-sonnet-4'] });
    expect(
      thrown(() =>
        route({
          preferences: models,
          target: { kind: 'pinned', peerId: D, model: 'gpt-4o', source: 'model' },
        }),
      ).code,
    ).toBe('model_not_allowed');
  });
});

describe('gateway policy header', () => {
  it('decodes base64url JSON and rejects garbage', () => {
    const header = Buffer.from(JSON.stringify({ minTrustScore: 80 })).toString('base64url');
    expect(parseGatewayPolicy(header)).toEqual({ minTrustScore: 80 });
    expect(thrown(() => parseGatewayPolicy('%%%')).code).toBe('invalid_request');
  });

  it('only narrows: the higher minimum wins', () => {
    expect(narrowPreferences(own, { minTrustScore: 10 }).minTrustScore).toBe(60);
  });
});

describe('failover rules', () => {
  it('classifies statuses and transport failures', () => {
    expect([500, 502, 503, 408, 429, 400, 401, 404].map(actionForStatus)).toEqual([
      'next',
      'next',
      'next',
      'next',
      'same',
      'stop',
      'stop',
      'stop',
    ]);
    const early = (failure: 'reset' | 'cancelled' | 'unreachable' | 'timeout') =>
      new TransportError(failure, A, failure, { beforeHead: true });
    expect(actionForTransportError(early('reset'))).toBe('next');
    expect(actionForTransportError(early('timeout'))).toBe('next');
    expect(actionForTransportError(early('unreachable'))).toBe('next');
    expect(actionForTransportError(early('cancelled'))).toBe('stop');
    expect(
      actionForTransportError(new TransportError('reset', A, 'x', { beforeHead: false })),
    ).toBe('stop');
  });

  it('honours Retry-After only within the bound', () => {
    expect(retryAfterMs('2', 5000)).toBe(2000);
    expect(retryAfterMs('60', 5000)).toBeUndefined();
    expect(retryAfterMs(undefined, 5000)).toBe(0);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 20_000, 5000)).toBe(5000);
  });
});

describe('conversation affinity keys', () => {
  it('uses client session ids, else system + first user turn', () => {
    expect(conversationKey({ metadata: { user_id: 'user_x_session_1' } }, {})).toBe(
      'm:user_x_session_1',
    );
    expect(conversationKey({}, { session_id: 'abc' })).toBe('h:abc');
    const turn1 = {
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: 'hi' },
      ],
    };
    const turn2 = {
      messages: [
        ...turn1.messages,
        { role: 'assistant', content: 'yo' },
        { role: 'user', content: 'more' },
      ],
    };
    expect(conversationKey(turn1, {})).toBe(conversationKey(turn2, {}));
    expect(conversationKey({ messages: [{ role: 'user', content: 'other' }] }, {})).not.toBe(
      conversationKey(turn1, {}),
    );
  });

  it('forgets the oldest entry past capacity', () => {
    const store = new AffinityStore(2);
    store.remember('1', A);
    store.remember('2', B);
    store.remember('3', C);
    expect(store.get('1')).toBeUndefined();
    expect(store.get('3')).toBe(C);
  });
});

describe('upload limits', () => {
  it('answers 413 upload_body_too_large when the body is larger than every seller accepts', () => {
    const small = OfferIndex.fromPeers([
      peerRecord({ peerId: 'a', uploadLimitBytes: 100, services: [{ id: 'gpt-4o' }] }),
      peerRecord({ peerId: 'b', uploadLimitBytes: 200, services: [{ id: 'gpt-4o' }] }),
    ]);
    const error = thrown(() => route({ index: small, bodyBytes: 500 }));
    expect(error.code).toBe('upload_body_too_large');
    expect(error.status).toBe(413);
    expect(order(route({ index: small, bodyBytes: 150 }))).toEqual([B]);
  });
});
