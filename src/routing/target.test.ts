import { afterAll, describe, expect, it } from 'vitest';
import { peerIdFor } from '../catalog/testing/peerRecord.js';
import { isSvcError } from '../errors/index.js';
import { removeTempDir, tempDir } from '../testing/index.js';
import { RouteStateStore } from './routeState.js';
import { type ResolveTargetInput, resolveTarget, resolveTargetCached } from './target.js';

const P1 = peerIdFor('p1');
const P2 = peerIdFor('p2');
const P3 = peerIdFor('p3');
const presets = {
  coder: { model: 'claude-sonnet-4', system: 'Be terse.', params: { temperature: 0 } },
};
const resolve = (input: Partial<ResolveTargetInput>) =>
  resolveTarget({ model: undefined, presets, ...input });

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isSvcError(error)) return error.code;
    throw error;
  }
  return 'no error';
}

describe('resolveTargetCached', () => {
  it('answers equal inputs with one frozen result, keyed on every input', () => {
    const input = { model: '@preset/coder', presets };
    const first = resolveTargetCached(input);
    expect(first).toEqual(resolveTarget(input));
    expect(resolveTargetCached({ ...input })).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first.target)).toBe(true);
    const pinned = resolveTargetCached({ ...input, pinHeader: P1 });
    expect(pinned.target).toMatchObject({ kind: 'pinned', peerId: P1 });
    expect(resolveTargetCached({ ...input, sessionPin: P2 }).target).toMatchObject({
      peerId: P2,
    });
    expect(resolveTargetCached({ model: 'svc', presets, defaultRoute: 'o3' }).target).toEqual({
      kind: 'automatic',
      model: 'o3',
    });
    // Other presets: resolved afresh.
    const other = { coder: { model: 'gpt-4o', params: {} } };
    expect(resolveTargetCached({ model: '@preset/coder', presets: other }).target).toEqual({
      kind: 'automatic',
      model: 'gpt-4o',
    });
    // Errors are never remembered.
    expect(code(() => resolveTargetCached({ model: 'svc', presets }))).toBe('no_default_route');
    expect(code(() => resolveTargetCached({ model: 'svc', presets }))).toBe('no_default_route');
  });
});

describe('resolveTarget', () => {
  it('routes a plain model automatically', () => {
    expect(resolve({ model: 'gpt-4o' }).target).toEqual({ kind: 'automatic', model: 'gpt-4o' });
  });

  it('pins <peer>@<service>, stripping 0x and normalising case', () => {
    expect(resolve({ model: `0x${P1.toUpperCase()}@gpt-4o` }).target).toEqual({
      kind: 'pinned',
      peerId: P1,
      model: 'gpt-4o',
      source: 'model',
    });
  });

  it('applies pin precedence: header, then model prefix, then session pin', () => {
    const both = resolve({ model: `${P1}@gpt-4o`, pinHeader: P2, sessionPin: P3 });
    expect(both.target).toMatchObject({ peerId: P2, model: 'gpt-4o', source: 'header' });
    expect(resolve({ model: `${P1}@gpt-4o`, sessionPin: P3 }).target).toMatchObject({ peerId: P1 });
    expect(resolve({ model: 'gpt-4o', sessionPin: P3 }).target).toMatchObject({
      peerId: P3,
      model: 'gpt-4o',
      source: 'session',
    });
    expect(resolve({ pinHeader: `${P2}@o3` }).target).toMatchObject({ peerId: P2, model: 'o3' });
  });

  it('follows the default route for svc, else no_default_route', () => {
    expect(resolve({ model: 'svc', defaultRoute: 'o3' }).target).toEqual({
      kind: 'automatic',
      model: 'o3',
    });
    expect(resolve({ model: 'svc', defaultRoute: `${P1}@o3` }).target).toMatchObject({
      peerId: P1,
    });
    expect(code(() => resolve({ model: 'svc' }))).toBe('no_default_route');
  });

  it('expands presets and rejects unknown ones', () => {
    const resolved = resolve({ model: '@preset/coder' });
    expect(resolved.target).toEqual({ kind: 'automatic', model: 'claude-sonnet-4' });
    expect(resolved.preset?.config.system).toBe('Be terse.');
    expect(code(() => resolve({ model: '@preset/nope' }))).toBe('unknown_preset');
  });

  it('needs a model or a pin', () => {
    expect(code(() => resolve({}))).toBe('missing_routing_target');
    expect(code(() => resolve({ model: '  ' }))).toBe('missing_routing_target');
    expect(code(() => resolve({ pinHeader: 'not-a-peer' }))).toBe('invalid_request');
  });
});

describe('RouteStateStore', () => {
  const dir = tempDir('svc-route-state-');
  afterAll(() => removeTempDir(dir));

  it('persists the default route and session pin across instances', () => {
    new RouteStateStore(dir).update((s) => ({ ...s, defaultRoute: 'o3', sessionPin: P1 }));
    expect(new RouteStateStore(dir).read()).toEqual({ defaultRoute: 'o3', sessionPin: P1 });
    new RouteStateStore(dir).update(({ sessionPin: _, ...rest }) => rest);
    expect(new RouteStateStore(dir).read()).toEqual({ defaultRoute: 'o3' });
  });
});
