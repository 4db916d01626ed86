import { majorityVote, mcnemarExact, pairedDifferenceInterval, wilsonInterval, type Interval } from './stats.js';
import { contiguousSamples, type CouncilLine, type EvalMode, type ItemResults, type SampleLine } from './results.js';
import { isCorrect, type EvalItem } from './task-sets.js';

/**
 * The arms of an eval, all at a known number of model calls per item:
 * - `single`: one call (sample 0);
 * - `sc-<k>`: self-consistency, the majority answer of samples 0..k-1;
 * - `council-<mode>`: one council run in that mode, its answer read from the synthesis;
 * - `sc=<mode>`: self-consistency with exactly as many samples, item by item, as that council run
 *   made calls (its classification call included), so the council is set against voting at equal cost.
 */
export type Arm =
  | { readonly kind: 'single' }
  | { readonly kind: 'self_consistency'; readonly samples: number }
  | { readonly kind: 'council'; readonly mode: EvalMode }
  | { readonly kind: 'matched'; readonly mode: EvalMode };

/** An arm's name in the report: `single`, `sc-K`, `council-MODE`, `sc=MODE`. */
export function armName(arm: Arm): string {
  switch (arm.kind) {
    case 'single':
      return 'single';
    case 'self_consistency':
      return `sc-${arm.samples}`;
    case 'council':
      return `council-${arm.mode}`;
    case 'matched':
      return `sc=${arm.mode}`;
  }
}

/** The arms for these modes and fixed sample counts: single first, then each council beside its matched vote. */
export function armsFor(modes: readonly EvalMode[], samples: readonly number[]): Arm[] {
  return [
    { kind: 'single' },
    ...[...new Set(samples)].filter((k) => k > 1).map((samples): Arm => ({ kind: 'self_consistency', samples })),
    ...modes.flatMap((mode): Arm[] => [
      { kind: 'council', mode },
      { kind: 'matched', mode },
    ]),
  ];
}

/** How many samples an item needs once its council runs are known (undefined: a council run is still missing). */
export function samplesNeeded(arms: readonly Arm[], item: ItemResults | undefined): number | undefined {
  let need = 1;
  for (const arm of arms) {
    if (arm.kind === 'self_consistency') need = Math.max(need, arm.samples);
    if (arm.kind === 'matched') {
      const run = item?.council.get(arm.mode);
      if (!run) return undefined;
      need = Math.max(need, run.calls);
    }
  }
  return need;
}

/** One arm's score on one item. */
export interface Scored {
  readonly correct: boolean;
  readonly answer: string | undefined;
  readonly calls: number;
  readonly tokens: number;
  readonly cost_usd: number | undefined;
  /** A council run's status when it did not complete (its answer then counts as none). */
  readonly ended?: string;
}

function usageOf(lines: readonly (SampleLine | CouncilLine)[]): Omit<Scored, 'correct' | 'answer'> {
  const priced = lines.every((l) => l.cost_usd !== undefined);
  return {
    calls: lines.reduce((n, l) => n + l.calls, 0),
    tokens: lines.reduce((n, l) => n + l.prompt_tokens + l.completion_tokens, 0),
    cost_usd: priced ? lines.reduce((n, l) => n + (l.cost_usd ?? 0), 0) : undefined,
  };
}

/** An arm's score on an item, or undefined while the item lacks what the arm needs. */
export function scoreArm(arm: Arm, item: EvalItem, results: ItemResults | undefined): Scored | undefined {
  const samples = contiguousSamples(results);
  const vote = (n: number): Scored | undefined => {
    if (samples.length < n) return undefined;
    const used = samples.slice(0, n);
    const answer = majorityVote(used.map((s) => s.answer));
    return { correct: isCorrect(answer, item.answer), answer, ...usageOf(used) };
  };
  switch (arm.kind) {
    case 'single':
      return vote(1);
    case 'self_consistency':
      return vote(arm.samples);
    case 'council': {
      const run = results?.council.get(arm.mode);
      if (!run) return undefined;
      const ended = run.status === 'completed' ? {} : { ended: run.status };
      return { correct: isCorrect(run.answer, item.answer), answer: run.answer, ...usageOf([run]), ...ended };
    }
    case 'matched': {
      const run = results?.council.get(arm.mode);
      return run ? vote(Math.max(1, run.calls)) : undefined;
    }
  }
}

/** One arm over the items scored: accuracy with its Wilson interval, and its cost per item. */
export interface ArmSummary {
  readonly arm: string;
  readonly items: number;
  readonly correct: number;
  readonly accuracy: number;
  readonly ci95: Interval;
  readonly calls_per_item: number;
  readonly tokens_per_item: number;
  /** Undefined when a model used has no price. */
  readonly cost_per_item_usd: number | undefined;
  /** Council arms: runs that did not complete, by status (paused, stopped, …); each counted as no answer. */
  readonly not_completed?: Readonly<Record<string, number>>;
}

/** A paired comparison over the same items: `arm` − `baseline`. */
export interface Comparison {
  readonly arm: string;
  readonly baseline: string;
  /** Items only the arm got right, and only the baseline. */
  readonly arm_only: number;
  readonly baseline_only: number;
  readonly difference: number;
  readonly ci95: Interval;
  /** McNemar's exact test, two-sided. */
  readonly p_value: number;
}

/** What `maestro eval` reports (printed as a table, kept as JSON). */
export interface EvalReport {
  /** Items every arm has a result for (only they are scored, so every comparison is paired). */
  readonly items_scored: number;
  readonly items_total: number;
  readonly arms: ArmSummary[];
  readonly comparisons: Comparison[];
}

/** The report over the items every arm has finished. */
export function buildReport(items: readonly EvalItem[], arms: readonly Arm[], results: ReadonlyMap<string, ItemResults>): EvalReport {
  const table = items
    .map((item) => arms.map((arm) => scoreArm(arm, item, results.get(item.id))))
    .filter((row): row is Scored[] => row.every((s) => s !== undefined));
  const column = (i: number): Scored[] => table.map((row) => row[i] as Scored);
  const summaries = arms.map((arm, i) => summarize(armName(arm), column(i)));
  const comparisons: Comparison[] = [];
  arms.forEach((arm, i) => {
    if (arm.kind !== 'single') comparisons.push(compare(armName(arm), column(i), 'single', column(0)));
    if (arm.kind === 'council') {
      const matched = arms.findIndex((a) => a.kind === 'matched' && a.mode === arm.mode);
      if (matched >= 0) comparisons.push(compare(armName(arm), column(i), armName(arms[matched] as Arm), column(matched)));
    }
  });
  return { items_scored: table.length, items_total: items.length, arms: summaries, comparisons };
}

function summarize(arm: string, scores: readonly Scored[]): ArmSummary {
  const n = scores.length;
  const correct = scores.filter((s) => s.correct).length;
  const mean = (f: (s: Scored) => number): number => (n === 0 ? 0 : scores.reduce((t, s) => t + f(s), 0) / n);
  const priced = scores.every((s) => s.cost_usd !== undefined);
  const ended: Record<string, number> = {};
  for (const s of scores) if (s.ended) ended[s.ended] = (ended[s.ended] ?? 0) + 1;
  return {
    arm,
    items: n,
    correct,
    accuracy: n === 0 ? 0 : correct / n,
    ci95: wilsonInterval(correct, n),
    calls_per_item: mean((s) => s.calls),
    tokens_per_item: mean((s) => s.tokens),
    cost_per_item_usd: priced ? mean((s) => s.cost_usd ?? 0) : undefined,
    ...(Object.keys(ended).length > 0 ? { not_completed: ended } : {}),
  };
}

function compare(arm: string, scores: readonly Scored[], baseline: string, base: readonly Scored[]): Comparison {
  let armOnly = 0;
  let baseOnly = 0;
  scores.forEach((s, i) => {
    const b = base[i] as Scored;
    if (s.correct && !b.correct) armOnly++;
    if (!s.correct && b.correct) baseOnly++;
  });
  const interval = pairedDifferenceInterval(armOnly, baseOnly, scores.length);
  return {
    arm,
    baseline,
    arm_only: armOnly,
    baseline_only: baseOnly,
    difference: interval.estimate,
    ci95: { low: interval.low, high: interval.high },
    p_value: mcnemarExact(armOnly, baseOnly),
  };
}
