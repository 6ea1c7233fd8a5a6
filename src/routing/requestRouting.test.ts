import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../config/index.js';
import { narrowPreferences, ownPreferences } from './preferences.js';
import { requestRouting, withoutRoutingFields } from './requestRouting.js';
import { resolveTarget, splitModelVariant } from './target.js';

describe('request routing choices', () => {
  it('reads sort from the body before the header and turns max_price into caps', () => {
    expect(requestRouting({ sort: 'latency' }, 'throughput').sort).toBe('latency');
    expect(requestRouting({}, ' throughput ').sort).toBe('throughput');
    expect(requestRouting({}, undefined)).toEqual({});
    expect(requestRouting({ max_price: { prompt: 1, completion: 2 } }, undefined)).toEqual({
      narrowing: {
        maxPricing: {
          inputUsdPerMillion: 1,
          cachedInputUsdPerMillion: 1,
          outputUsdPerMillion: 2,
        },
      },
    });
  });

  it('refuses an unknown sort and a malformed max_price with invalid_request', () => {
    for (const bad of [
      () => requestRouting({ sort: 'cheapest' }, undefined),
      () => requestRouting({}, 'fast'),
      () => requestRouting({ max_price: 3 }, undefined),
      () => requestRouting({ max_price: { prompt: -1 } }, undefined),
      () => requestRouting({ max_price: { tokens: 1 } }, undefined),
    ]) {
      expect(bad).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    }
  });

  it('never forwards the routing fields and leaves other bodies untouched', () => {
    const body = { model: 'm', sort: 'latency', max_price: {}, temperature: 0 };
    expect(withoutRoutingFields(body)).toEqual({ model: 'm', temperature: 0 });
    const plain = { model: 'm' };
    expect(withoutRoutingFields(plain)).toBe(plain);
  });

  it('splits :floor and :nitro off a model, on pins too', () => {
    expect(splitModelVariant('llama:nitro')).toEqual({ model: 'llama', sort: 'throughput' });
    expect(splitModelVariant('llama:floor')).toEqual({ model: 'llama', sort: 'price' });
    expect(splitModelVariant('llama3:8b')).toEqual({ model: 'llama3:8b' });
    expect(splitModelVariant(':nitro')).toEqual({ model: ':nitro' });
    const peer = 'ab'.repeat(20);
    const pinned = resolveTarget({ model: `${peer}@llama:floor`, presets: {} });
    expect(pinned).toEqual({
      target: { kind: 'pinned', peerId: peer, model: 'llama', source: 'model' },
      variantSort: 'price',
    });
  });

  it('a later layer replaces the sort: buyer config, then preset, then gateway policy', () => {
    const own = ownPreferences({ ...defaultConfig().buyer.routingPreferences, sort: 'throughput' });
    expect(own.sort).toBe('throughput');
    expect(ownPreferences(defaultConfig().buyer.routingPreferences).sort).toBe('price');
    expect(narrowPreferences(own, { sort: 'latency' }).sort).toBe('latency');
    expect(narrowPreferences(own, { minTrustScore: 10 }).sort).toBe('throughput');
  });
});
