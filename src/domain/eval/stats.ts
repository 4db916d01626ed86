/**
 * The statistics of `maestro eval`, pure: the Wilson score interval of an accuracy, and McNemar's
 * exact test of two arms answering the same items. Known values are in tests/domain/eval/stats.test.ts.
 */

/** z for a two-sided 95 % interval. */
export const Z95 = 1.959963984540054;

/** An interval on the 0–1 scale. */
export interface Interval {
  readonly low: number;
  readonly high: number;
}

/**
 * The Wilson score interval for `successes` out of `trials` (Wilson 1927): unlike the normal
 * approximation it stays inside 0–1 and is honest at 0 % and 100 %. No trials: the whole range.
 */
export function wilsonInterval(successes: number, trials: number, z: number = Z95): Interval {
  if (trials <= 0) return { low: 0, high: 1 };
  const p = successes / trials;
  const z2 = z * z;
  const centre = p + z2 / (2 * trials);
  const spread = z * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials));
  const denominator = 1 + z2 / trials;
  return { low: Math.max(0, (centre - spread) / denominator), high: Math.min(1, (centre + spread) / denominator) };
}

/** ln(n!) by summation: exact enough for the item counts of an eval (thousands at most). */
function logFactorials(n: number): number[] {
  const out = [0];
  for (let i = 1; i <= n; i++) out.push((out[i - 1] as number) + Math.log(i));
  return out;
}

/**
 * McNemar's exact test: of the items where two arms disagree, `b` only the first got right and `c`
 * only the second. Under the null each discordant item goes either way with probability ½, so the
 * two-sided p-value is 2·P(X ≤ min(b, c)) for X ~ Binomial(b + c, ½), capped at 1.
 */
export function mcnemarExact(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  const lf = logFactorials(n);
  const k = Math.min(b, c);
  let tail = 0;
  for (let i = 0; i <= k; i++) tail += Math.exp((lf[n] as number) - (lf[i] as number) - (lf[n - i] as number) - n * Math.LN2);
  return Math.min(1, 2 * tail);
}

/**
 * A 95 % interval for the paired difference of two accuracies (first − second) over the same items,
 * from the discordant counts (Wald interval of a paired difference; Agresti & Min's +½ adjustment
 * keeps it from collapsing to a point when nothing disagrees).
 */
export function pairedDifferenceInterval(b: number, c: number, trials: number, z: number = Z95): Interval & { readonly estimate: number } {
  if (trials <= 0) return { estimate: 0, low: -1, high: 1 };
  const estimate = (b - c) / trials;
  const n = trials + 2;
  const pb = (b + 0.5) / n;
  const pc = (c + 0.5) / n;
  const d = pb - pc;
  const se = Math.sqrt((pb + pc - d * d) / n);
  return { estimate, low: Math.max(-1, d - z * se), high: Math.min(1, d + z * se) };
}

/**
 * The majority answer of several samples (self-consistency). Ties go to the answer that reached
 * its count first, so the vote does not depend on anything but the samples' order. Missing
 * answers (`undefined`) do not vote; with none, there is no answer.
 */
export function majorityVote(answers: readonly (string | undefined)[]): string | undefined {
  const counts = new Map<string, number>();
  let best: string | undefined;
  let bestCount = 0;
  for (const answer of answers) {
    if (answer === undefined) continue;
    const count = (counts.get(answer) ?? 0) + 1;
    counts.set(answer, count);
    if (count > bestCount) {
      best = answer;
      bestCount = count;
    }
  }
  return best;
}
