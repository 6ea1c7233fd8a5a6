/**
 * Ephemeral key pairs made ahead are made after the request that follows the handshake which took
 * one, not during it (docs/decisions/213-what-a-new-connection-still-costs.md). Node's key
 * generation is counted; the clock is vitest's.
 */
import type * as Crypto from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const generated = vi.hoisted(() => ({ count: 0 }));

vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof Crypto>();
  const generateKeyPairSync = ((...args: Parameters<typeof original.generateKeyPairSync>) => {
    generated.count++;
    return original.generateKeyPairSync(...args);
  }) as typeof original.generateKeyPairSync;
  return { ...original, generateKeyPairSync };
});

const { keyAgreement } = await import('./noiseKeyAgreement.js');

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('ephemeral key pairs made ahead', () => {
  it('are made once the first request is done, one per timer turn, up to four', () => {
    // None ready yet: the first handshake makes its pair at once.
    const first = keyAgreement.generateX25519KeyPair();
    expect(generated.count).toBe(1);
    // While the request that follows the handshake runs, no key is generated.
    vi.advanceTimersByTime(200);
    expect(generated.count).toBe(1);
    vi.advanceTimersByTime(60);
    expect(generated.count).toBe(2);
    vi.advanceTimersByTime(1_000);
    expect(generated.count).toBe(5);
    // A handshake now takes one made ahead and generates nothing on its path.
    const second = keyAgreement.generateX25519KeyPair();
    expect(generated.count).toBe(5);
    expect(Buffer.from(second.publicKey).equals(Buffer.from(first.publicKey))).toBe(false);
    vi.advanceTimersByTime(200);
    expect(generated.count).toBe(5);
    vi.advanceTimersByTime(100);
    expect(generated.count).toBe(6);
  });
});
