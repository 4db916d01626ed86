import { z } from 'zod';
import type { Step } from '../run-state.js';
import { jsonSchemaOf, readStructured } from '../structured-reply.js';
import { personaStep } from './conversation.js';
import type { ModeContext, ReplyCheck, StepSpec } from './mode.js';

/**
 * Anonymous cross-review (beyond seed 001): after assessing, each persona ranks the others'
 * assessments under neutral labels — A, B, C… never names, and never its own — so nobody votes for
 * itself or follows a name. Ranks are aggregated by Borda count into a standing.
 */

export const ReviewReply = z.strictObject({
  /** Labels, best first; every label shown exactly once. */
  ranking: z.array(z.string().trim().min(1).max(3)).min(1).max(26),
  rationale: z.string().trim().min(1).max(500),
});
export const REVIEW_SCHEMA = { name: 'review', schema: jsonSchemaOf(ReviewReply) };

/**
 * Labels for one reviewer: the other personas, in an order rotated by the reviewer's position (so
 * label A is not always the same persona, and position bias spreads out), labelled A, B, C…
 */
export function reviewLabels(personas: readonly string[], reviewer: string): Map<string, string> {
  const at = personas.indexOf(reviewer);
  const others = [...personas.slice(at + 1), ...personas.slice(0, Math.max(at, 0))].filter((p) => p !== reviewer);
  return new Map(others.map((p, i) => [p, String.fromCharCode(65 + i)]));
}

export function reviewPrompt(briefing: string, shown: readonly { label: string; text: string }[]): string {
  return [
    briefing,
    '--- Assessments by other members, anonymised ---',
    ...shown.map((s) => `Assessment ${s.label}:\n${s.text}`),
    `Rank these assessments from the most to the least sound. Reply with ONE JSON object and nothing else: {"ranking": [${shown.map((s) => `"${s.label}"`).join(', ')} in your order], "rationale": "<one line>"}`,
  ].join('\n\n');
}

export const reviewId = (persona: string): string => `review:${persona}`;

/**
 * A reviewer's call: the others' assessments (`assessed`, each as text) under its own labels, on their
 * own — without its history, so its own assessment is not shown beside the others and it cannot vote for it.
 */
export function reviewStep(ctx: ModeContext, reviewer: string, assessed: readonly { persona: string; text: string }[]): StepSpec {
  const labels = reviewLabels(ctx.plan.personas, reviewer);
  const shown = assessed
    .filter((a) => a.persona !== reviewer)
    .map((a) => ({ label: labels.get(a.persona) ?? '?', text: a.text }))
    .sort((x, y) => x.label.localeCompare(y.label));
  const expected = [...labels.values()];
  const prompt = reviewPrompt(ctx.briefing, shown);
  return personaStep(ctx, {
    id: reviewId(reviewer),
    kind: 'review',
    persona: reviewer,
    round: 2,
    prompt,
    responseFormat: REVIEW_SCHEMA,
    check: (reply) => reviewRetry(reply, expected),
  });
}

/** Reads a ranking: every label shown, once. */
export function readRanking(reply: string, expected: readonly string[]): { ok: true; ranking: string[] } | { ok: false; problem: string } {
  const read = readStructured(reply, ReviewReply);
  if (!read.ok) return { ok: false, problem: read.error };
  const ranking = read.value.ranking.map((l) => l.toUpperCase());
  const missing = expected.filter((l) => !ranking.includes(l));
  const unknown = ranking.filter((l) => !expected.includes(l));
  if (missing.length > 0 || unknown.length > 0 || new Set(ranking).size !== ranking.length) {
    return {
      ok: false,
      problem: `the ranking must name each of ${expected.join(', ')} exactly once (missing: ${missing.join(', ') || 'none'}; unknown: ${unknown.join(', ') || 'none'})`,
    };
  }
  return { ok: true, ranking };
}

export function reviewRetry(reply: string, expected: readonly string[]): ReplyCheck {
  const r = readRanking(reply, expected);
  if (r.ok) return { ok: true };
  return {
    ok: false,
    problem: r.problem,
    retryPrompt: `That was not a valid ranking (${r.problem}). Reply with ONE JSON object and nothing else: {"ranking": [${expected.map((l) => `"${l}"`).join(', ')} in your order], "rationale": "<one line>"}`,
  };
}

export interface ReviewStanding {
  /** Persona ids, best first (ties: speaker order). */
  readonly order: readonly string[];
  /** Borda points: for each ranking of k labels, the first gets k − 1 points, the last 0. */
  readonly points: Readonly<Record<string, number>>;
  /** Persona id → weight 0.5–1.5: 0.5 + the share of the points it could have had. */
  readonly weights: Readonly<Record<string, number>>;
  /** Reviewers whose ranking could not be read. */
  readonly invalid: readonly string[];
}

/** Borda count over every readable ranking, mapped back from labels to personas. */
export function aggregateReviews(personas: readonly string[], reviews: readonly Step[]): ReviewStanding {
  const points: Record<string, number> = Object.fromEntries(personas.map((p) => [p, 0]));
  const possible: Record<string, number> = Object.fromEntries(personas.map((p) => [p, 0]));
  const invalid: string[] = [];
  for (const review of reviews) {
    const labels = reviewLabels(personas, review.persona);
    const byLabel = new Map([...labels].map(([p, l]) => [l, p]));
    const read = readRanking(review.reply, [...labels.values()]);
    if (!read.ok) {
      invalid.push(review.persona);
      continue;
    }
    const k = read.ranking.length;
    read.ranking.forEach((label, i) => {
      const persona = byLabel.get(label);
      if (!persona) return;
      points[persona] = (points[persona] ?? 0) + (k - 1 - i);
      possible[persona] = (possible[persona] ?? 0) + (k - 1);
    });
  }
  const weights = Object.fromEntries(
    personas.map((p) => [p, Math.round((0.5 + ((possible[p] ?? 0) > 0 ? (points[p] ?? 0) / (possible[p] ?? 1) : 0.5)) * 1000) / 1000]),
  );
  const order = [...personas].sort((a, b) => (points[b] ?? 0) - (points[a] ?? 0) || personas.indexOf(a) - personas.indexOf(b));
  return { order, points, weights, invalid };
}

/** The standing as the artifact shows it. */
export function standingTable(standing: ReviewStanding): string {
  return [
    "Each persona ranked the others' assessments under neutral labels (never names, never its own); ranks are aggregated by Borda count. The standing multiplies each persona's weight in composition and arbitration.",
    '',
    '| Standing | Persona | Borda points | Weight |',
    '|---|---|---|---|',
    ...standing.order.map((p, i) => `| ${i + 1} | \`${p}\` | ${standing.points[p] ?? 0} | ${(standing.weights[p] ?? 1).toFixed(2)} |`),
    ...(standing.invalid.length > 0
      ? ['', `Rankings that could not be read (left out): ${standing.invalid.map((p) => `\`${p}\``).join(', ')}.`]
      : []),
  ].join('\n');
}
