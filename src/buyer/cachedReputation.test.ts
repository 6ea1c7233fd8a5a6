import { describe, expect, it } from 'vitest';
import { CachedReputation, type ScoreReader } from './cachedReputation.js';

const A = 'aa'.repeat(20);
const B = 'bb'.repeat(20);

describe('CachedReputation', () => {
  it('answers unscored first, then the batched score; re-reads after the ttl', async () => {
    const asked: string[][] = [];
    const reader: ScoreReader = {
      read: async (addresses) => {
        asked.push([...addresses]);
        return addresses.map((address) => ({
          address,
          score: address.includes('aa') ? 75 : null,
        }));
      },
    };
    let now = 0;
    const reputation = new CachedReputation(reader, { ttlMs: 1000, now: () => now });
    expect(reputation.score(A)).toBeUndefined();
    expect(reputation.score(B)).toBeUndefined();
    await reputation.settled();
    expect(asked).toEqual([[`0x${A}`, `0x${B}`]]);
    expect(reputation.score(A)).toBe(75);
    expect(reputation.score(B)).toBeUndefined();
    await reputation.settled();
    expect(asked).toHaveLength(1);
    now = 2000;
    expect(reputation.score(A)).toBe(75);
    await reputation.settled();
    expect(asked).toHaveLength(2);
  });

  it('keeps serving what it has when the chain is down', async () => {
    const errors: unknown[] = [];
    const reputation = new CachedReputation(
      {
        read: async () => {
          throw new Error('rpc down');
        },
      },
      { onError: (error) => errors.push(error) },
    );
    expect(reputation.score(A)).toBeUndefined();
    await reputation.settled();
    expect(errors).toHaveLength(1);
    expect(reputation.score(A)).toBeUndefined();
  });
});
