import { describe, expect, it } from 'vitest';
import {
  answerSimilarity,
  apartness,
  comparableText,
  oddOneOutTest,
  type ProbeScores,
  quantise,
  tokensOf,
} from './statistics.js';
import { seededRandom } from './testing/demoMarket.js';

/** The p-value by listing every assignment of the audited seller's place (small cases only). */
function bruteForce(probes: ProbeScores[]): number {
  const observed = probes.reduce((sum, probe) => sum + probe.scores[probe.seller]!, 0);
  let total = 0;
  let extreme = 0;
  const walk = (at: number, sum: number, weight: number) => {
    if (at === probes.length) {
      total += weight;
      if (sum >= observed) extreme += weight;
      return;
    }
    const scores = probes[at]!.scores;
    for (const score of scores) walk(at + 1, sum + score, weight / scores.length);
  };
  walk(0, 0, 1);
  return extreme / total;
}

describe('audit statistics', () => {
  it('the exact test equals a full enumeration of the null distribution', () => {
    const random = seededRandom(1);
    for (let trial = 0; trial < 200; trial++) {
      const probes: ProbeScores[] = Array.from({ length: 1 + Math.floor(random() * 6) }, () => {
        const n = 3 + Math.floor(random() * 2);
        return {
          scores: Array.from({ length: n }, () => Math.round((random() - 0.5) * 80)),
          seller: Math.floor(random() * n),
        };
      });
      expect(oddOneOutTest(probes).pValue).toBeCloseTo(bruteForce(probes), 12);
    }
  });

  it('is valid: under exchangeable answers, p ≤ α happens at most about α of the time', () => {
    const random = seededRandom(2);
    let rejections = 0;
    const runs = 2_000;
    for (let run = 0; run < runs; run++) {
      const probes = Array.from({ length: 12 }, () => ({
        scores: quantise([random(), random(), random()].map((x) => x - 0.5)),
        seller: 0,
      }));
      if (oddOneOutTest(probes).pValue <= 0.05) rejections++;
    }
    expect(rejections / runs).toBeLessThanOrEqual(0.065);
    expect(rejections / runs).toBeGreaterThan(0.03);
  });

  it('reaches 3^-n when the seller is the odd one out of three in every probe, and counts it', () => {
    const probes = Array.from({ length: 10 }, () => ({ scores: [50, -25, -25], seller: 0 }));
    const result = oddOneOutTest(probes);
    expect(result.pValue).toBeCloseTo(3 ** -10, 15);
    expect(result.oddOneOut).toBe(10);
    expect(oddOneOutTest([]).pValue).toBe(1);
  });

  it('the answer unlike the others stands furthest apart; alike answers all stand at zero', () => {
    const same = 'amber basalt cedar delta ember fjord granite harbor';
    const other = 'zephyr yarrow xenon willow valley umber tundra sage';
    const [a, b, c] = apartness([other, same, same]);
    expect(a).toBeGreaterThan(0);
    expect(b).toBeLessThan(0);
    expect(b).toBeCloseTo(c!, 12);
    expect(apartness([same, same, same])).toEqual([0, 0, 0]);
    expect(() => apartness([same, same])).toThrow(RangeError);
    expect(answerSimilarity(same, same)).toBe(1);
    expect(answerSimilarity('', '')).toBe(1);
    expect(answerSimilarity(same, other)).toBe(0);
  });

  it('reads at most 512 tokens, and keeps exactly the text it read as evidence', () => {
    const long = 'word, '.repeat(1_000);
    expect(tokensOf(long)).toHaveLength(512);
    const kept = comparableText(long);
    expect(tokensOf(kept)).toEqual(tokensOf(long));
    expect(kept.length).toBeLessThan(long.length);
    expect(comparableText('short answer')).toBe('short answer');
  });
});
