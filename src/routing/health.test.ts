import { describe, expect, it } from 'vitest';
import { HealthTracker } from './health.js';

const PEER = 'a'.repeat(40);

function tracker() {
  let now = 1_000_000;
  const health = new HealthTracker(() => now, {
    coolDownAfter: 3,
    coolDownMs: 30_000,
    penaltyPerFailure: 10,
  });
  return { health, advance: (ms: number) => (now += ms) };
}

describe('seller health', () => {
  it('cools a seller down after three failures in a row, for the cool-down only', () => {
    const { health, advance } = tracker();
    health.recordFailure(PEER, 'answer');
    health.recordFailure(PEER, 'answer');
    expect(health.coolingDown(PEER)).toBe(false);
    health.recordFailure(PEER, 'answer');
    expect(health.coolingDown(PEER)).toBe(true);
    expect(health.penalty(PEER)).toBe(30);
    advance(30_000);
    expect(health.coolingDown(PEER)).toBe(false);
  });

  it('forgets connection failures once the seller is back', () => {
    const { health } = tracker();
    for (let i = 0; i < 3; i++) health.recordFailure(PEER, 'connection');
    expect(health.coolingDown(PEER)).toBe(true);
    health.connectionBack(PEER);
    expect(health.coolingDown(PEER)).toBe(false);
    expect(health.penalty(PEER)).toBe(0);
    // Back, then failing again: counted from zero.
    health.recordFailure(PEER, 'connection');
    health.recordFailure(PEER, 'connection');
    expect(health.coolingDown(PEER)).toBe(false);
    expect(health.totalFailures(PEER)).toBe(5);
  });

  it('keeps what failed answers earned when the seller comes back', () => {
    const { health } = tracker();
    health.recordFailure(PEER, 'connection');
    health.recordFailure(PEER, 'answer');
    health.recordFailure(PEER, 'connection');
    expect(health.coolingDown(PEER)).toBe(true);
    health.connectionBack(PEER);
    // The run had a failed answer in it: the cool-down is the answers' and stays.
    expect(health.coolingDown(PEER)).toBe(true);
    expect(health.penalty(PEER)).toBe(10);
  });

  it('ends every cool-down with a success', () => {
    const { health } = tracker();
    for (let i = 0; i < 3; i++) health.recordFailure(PEER, 'answer');
    health.recordSuccess(PEER);
    expect(health.coolingDown(PEER)).toBe(false);
    // The penalty of recent failures stays until they age out.
    expect(health.penalty(PEER)).toBe(30);
  });
});
