import { describe, expect, it } from 'vitest';
import { ReceiptSampler } from './receiptSample.js';

const count = (sampler: ReceiptSampler, peerId: string, draws: number) =>
  Array.from({ length: draws }, () => sampler.shouldCheck(peerId)).filter(Boolean).length;

describe('receipt checks by sample', () => {
  it('checks every free answer at a share of 1', () => {
    expect(count(new ReceiptSampler(1, () => 0), 'a', 1_000)).toBe(1_000);
  });

  it('checks about the share asked for, at random', () => {
    // 10,000 draws at 1/8: 1,250 expected, standard deviation 33; these bounds are 7.5 of them.
    const checked = count(new ReceiptSampler(0.125, () => 0), 'a', 10_000);
    expect(checked).toBeGreaterThan(1_000);
    expect(checked).toBeLessThan(1_500);
  });

  it('checks every answer of a seller refused within the hour, then samples it again', () => {
    const clock = { now: 0 };
    const sampler = new ReceiptSampler(0.01, () => clock.now);
    sampler.suspect('bad');
    expect(count(sampler, 'bad', 500)).toBe(500);
    // Another seller is still sampled.
    expect(count(sampler, 'good', 500)).toBeLessThan(50);
    clock.now = 3_600_001;
    expect(count(sampler, 'bad', 500)).toBeLessThan(50);
  });

  it('remembers at most 10,000 suspects, forgetting the oldest first', () => {
    const sampler = new ReceiptSampler(0.01, () => 0);
    for (let i = 0; i <= 10_000; i++) sampler.suspect(`peer-${i}`);
    expect(count(sampler, 'peer-10000', 100)).toBe(100);
    expect(count(sampler, 'peer-0', 500)).toBeLessThan(50);
  });
});
