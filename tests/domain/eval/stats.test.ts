import { describe, expect, it } from 'vitest';
import { majorityVote, mcnemarExact, pairedDifferenceInterval, wilsonInterval } from '../../../src/domain/eval/stats.js';

describe('eval statistics', () => {
  it('gives the Wilson score interval of known cases', () => {
    const eight = wilsonInterval(8, 10);
    expect(eight.low).toBeCloseTo(0.4902, 4);
    expect(eight.high).toBeCloseTo(0.9433, 4);
    const none = wilsonInterval(0, 10);
    expect(none.low).toBe(0);
    expect(none.high).toBeCloseTo(0.2775, 4);
    const all = wilsonInterval(100, 100);
    expect(all.low).toBeCloseTo(0.963, 3);
    expect(all.high).toBe(1);
    const half = wilsonInterval(50, 100);
    expect(half.low).toBeCloseTo(0.4038, 4);
    expect(half.high).toBeCloseTo(0.5962, 4);
    expect(wilsonInterval(0, 0)).toEqual({ low: 0, high: 1 });
  });

  it("gives McNemar's exact two-sided p-value from the discordant counts", () => {
    expect(mcnemarExact(1, 9)).toBeCloseTo(22 / 1024, 10);
    expect(mcnemarExact(9, 1)).toBeCloseTo(22 / 1024, 10);
    expect(mcnemarExact(0, 6)).toBeCloseTo(2 / 64, 10);
    expect(mcnemarExact(5, 5)).toBe(1);
    expect(mcnemarExact(0, 0)).toBe(1);
    // 3 vs 12 of 15: 2 · P(X ≤ 3), X ~ Bin(15, ½) = 2 · 576 / 32768
    expect(mcnemarExact(3, 12)).toBeCloseTo((2 * 576) / 32768, 10);
  });

  it('puts the paired difference at (b − c)/n with an interval around it', () => {
    const d = pairedDifferenceInterval(20, 5, 100);
    expect(d.estimate).toBeCloseTo(0.15, 10);
    expect(d.low).toBeGreaterThan(0.05);
    expect(d.high).toBeLessThan(0.26);
    const none = pairedDifferenceInterval(0, 0, 100);
    expect(none.estimate).toBe(0);
    expect(none.low).toBeLessThan(0);
    expect(none.high).toBeGreaterThan(0);
  });

  it('votes the most frequent answer; a tie goes to the answer that reached the count first; no answer does not vote', () => {
    expect(majorityVote(['3', '4', '4'])).toBe('4');
    expect(majorityVote(['a', 'b', 'b', 'a'])).toBe('b');
    expect(majorityVote([undefined, undefined, '7'])).toBe('7');
    expect(majorityVote([undefined])).toBeUndefined();
    expect(majorityVote([])).toBeUndefined();
  });
});
