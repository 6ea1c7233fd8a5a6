/** The seller store's bill-once keys (video deliveries) survive a restart. */
import { afterAll, describe, expect, it } from 'vitest';
import { tempDataDir } from '../testing.js';
import { SellerStore } from './store.js';

const dir = tempDataDir('seller-store');
afterAll(() => dir.remove());

describe('SellerStore.claimOnce', () => {
  it('is true once per key, also after the store is reopened', () => {
    const store = new SellerStore(dir.dir);
    expect(store.claimOnce('video|buyer|vid-1|job-1', 1)).toBe(true);
    expect(store.claimOnce('video|buyer|vid-1|job-1', 2)).toBe(false);
    store.close();
    const reopened = new SellerStore(dir.dir);
    expect(reopened.claimOnce('video|buyer|vid-1|job-1', 3)).toBe(false);
    expect(reopened.claimOnce('video|buyer|vid-1|job-2', 3)).toBe(true);
    reopened.close();
  });
});
