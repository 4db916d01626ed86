import { z } from 'zod';
import { arbitrate, type ArbitrationResult } from '../arbitration.js';
import { jsonSchemaOf, readStructured } from '../structured-reply.js';
import { VerdictAction, type Verdict } from '../verdict.js';
import type { Step } from '../run-state.js';
import { councilWeights, personaStep, replyCheck } from './conversation.js';
import type { ModeContext, StepSpec } from './mode.js';

/**
 * The reviewer gate (seed 003, stage 8.5): a persona named by `config.reviewer` critiques the
 * result — quality, completeness, contradictions between its parts — and answers with a verdict and
 * its findings. The verdict joins arbitration under its own label (`<id> (reviewer)`), and it is a
 * gate: the council never proceeds over a reviewer who did not say `proceed`.
 */

export const ReviewerReply = z.strictObject({
  action: VerdictAction,
  confidence: z.number().min(0).max(1),
  rationale: z.string().trim().min(1).max(500),
  /** One line per problem found: a contradiction, a gap, a part that misses its expected output. */
  findings: z.array(z.string().trim().min(1).max(500)).max(20).default([]),
});
export type ReviewerReply = z.infer<typeof ReviewerReply>;
/** What is asked of endpoints with a JSON Schema: every key required, no defaults (strict mode). */
export const REVIEWER_SCHEMA = {
  name: 'reviewer_verdict',
  schema: jsonSchemaOf(ReviewerReply.extend({ findings: z.array(z.string()).max(20) })),
};

export interface ReviewerVerdict extends Verdict {
  /** The persona that reviewed (the verdict's `persona` is its label, `<id> (reviewer)`). */
  readonly reviewer: string;
  readonly findings: readonly string[];
}

export const reviewerStepId = (persona: string): string => `reviewer:${persona}`;
export const reviewerLabel = (persona: string): string => `${persona} (reviewer)`;

const INSTRUCTION = [
  'You are the reviewer: the quality gate of this result. Check it against the task: is it complete, does each part meet what was expected of it, do any parts contradict each other, is anything claimed without support?',
  'Reply with ONE JSON object and nothing else:',
  '{"action": "proceed" | "investigate" | "escalate", "confidence": <0..1>, "rationale": "<one line>", "findings": ["<one line per problem: a contradiction, a gap, a quality issue>"]}',
  'proceed = the result can be used as it is; investigate = it needs more work first; escalate = a person must decide.',
].join('\n');

/** The reviewer's step: the briefing and the result, on their own (the reviewer judges it fresh, not from its own turns). */
export function reviewerStep(ctx: ModeContext, reviewer: string, subject: { title: string; text: string }, round: number): StepSpec {
  return personaStep(ctx, {
    id: reviewerStepId(reviewer),
    kind: 'verdict',
    persona: reviewer,
    round,
    prompt: [ctx.briefing, `--- ${subject.title} (the result to review) ---\n${subject.text}`, INSTRUCTION].join('\n\n'),
    responseFormat: REVIEWER_SCHEMA,
    check: (reply) => {
      const read = readStructured(reply, ReviewerReply, { percentages: ['confidence'] });
      return replyCheck(
        read.ok ? undefined : read.error,
        (problem) =>
          `That was not a valid review (${problem}). Reply with ONE JSON object and nothing else: {"action": "proceed" | "investigate" | "escalate", "confidence": <0..1>, "rationale": "<one line>", "findings": ["..."]}`,
      );
    },
  });
}

/** Reads the reviewer's answer; what does not read counts as `escalate` (fail closed). */
export function readReviewer(reviewer: string, reply: string): ReviewerVerdict {
  const label = reviewerLabel(reviewer);
  const read = readStructured(reply, ReviewerReply, { percentages: ['confidence'] });
  if (!read.ok) {
    const problem = `malformed review (${read.error})`;
    return {
      persona: label,
      reviewer,
      valid: false,
      problem,
      action: 'escalate',
      confidence: 1,
      rationale: `fail-closed: ${problem}`,
      findings: [],
    };
  }
  const { findings, ...verdict } = read.value;
  return { ...verdict, persona: label, reviewer, valid: true, findings };
}

/** The reviewer's verdict among the finished steps, if the gate ran. */
export function reviewerVerdictOf(done: readonly Step[]): ReviewerVerdict | undefined {
  const step = done.find((s) => s.id.startsWith('reviewer:'));
  return step ? readReviewer(step.persona, step.reply) : undefined;
}

const CAUTION: Record<Verdict['action'], number> = { proceed: 0, investigate: 1, escalate: 2 };

/**
 * Arbitrates the council's verdicts with the reviewer's (weighted like its persona), then applies the
 * gate: when the reviewer is more cautious than the result, its action stands and the dissent says why.
 */
export function arbitrateWithReviewer(
  ctx: ModeContext,
  council: readonly Verdict[],
  review: ReviewerVerdict | undefined,
): ArbitrationResult {
  const { weights, relevance } = councilWeights(ctx);
  if (!review) return arbitrate({ strategy: ctx.plan.arbitration, verdicts: council, weights, relevance });
  const persona = ctx.personas.get(review.reviewer);
  const result = arbitrate({
    strategy: ctx.plan.arbitration,
    verdicts: [...council, review],
    weights: { ...weights, [review.persona]: persona?.weight ?? 1 },
    relevance: { ...relevance, [review.persona]: relevance[review.reviewer] ?? 0.5 },
  });
  if (CAUTION[review.action] <= CAUTION[result.final_action]) return result;
  const why = review.valid ? `${review.action}: ${review.rationale}` : (review.problem ?? 'invalid review');
  const findings = review.findings.length > 0 ? ` (findings: ${review.findings.join('; ')})` : '';
  return {
    ...result,
    final_action: review.action,
    reasoning: `${result.reasoning}; the reviewer gate (${review.reviewer}) said ${review.action}, so the council does not proceed`,
    conflicts: [
      ...result.conflicts.filter((c) => !c.startsWith(`${review.persona} `) && !c.startsWith(`${review.persona}:`)),
      `reviewer gate (${review.reviewer}) ${why}${findings}`,
    ],
  };
}

/** The artifact's lines about the gate. */
export function reviewerSection(review: ReviewerVerdict): string {
  return [
    `Reviewer: \`${review.reviewer}\` — **${review.action}**${review.valid ? '' : ' (fail-closed)'} (confidence ${review.confidence.toFixed(2)}): ${review.rationale}`,
    '',
    review.findings.length > 0 ? review.findings.map((f) => `- ${f}`).join('\n') : '_No findings._',
  ].join('\n');
}
