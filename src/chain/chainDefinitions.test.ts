/** Our chain definitions carry what viem's own carry for the fields the chain layer uses. */
import * as viemChains from 'viem/chains';
import { describe, expect, it } from 'vitest';
import { base, baseSepolia, foundry } from './chainDefinitions.js';

describe('chain definitions', () => {
  it.each([
    ['base', base, viemChains.base],
    ['baseSepolia', baseSepolia, viemChains.baseSepolia],
    ['foundry', foundry, viemChains.foundry],
  ] as const)('%s matches viem/chains', (_name, ours, theirs) => {
    expect(ours.id).toBe(theirs.id);
    expect(ours.name).toBe(theirs.name);
    expect(ours.nativeCurrency).toEqual(theirs.nativeCurrency);
    expect(ours.rpcUrls.default).toEqual(theirs.rpcUrls.default);
    expect(ours.blockExplorers?.default).toEqual(theirs.blockExplorers?.default);
    expect(ours.contracts?.multicall3).toEqual(theirs.contracts?.multicall3);
    expect(Object.keys(ours.formatters ?? {})).toEqual(Object.keys(theirs.formatters ?? {}));
    expect(ours.serializers?.transaction).toBe(theirs.serializers?.transaction);
    expect(ours.testnet).toBe(theirs.testnet);
  });
});
