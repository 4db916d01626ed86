import { z } from 'zod';
import { jsonSchemaOf, readStructured, type Tolerance } from './structured-reply.js';
import { VerdictAction, type Verdict } from './verdict.js';

/**
 * A persona's independent assessment of a task (seed 001's EpistemicAssessmentSchema): the action
 * it recommends, its confidence and why, and thirteen epistemic vectors, each a 0–1 score with a
 * one-line rationale.
 */
export const VECTORS = [
  'engagement',
  'know',
  'do',
  'context',
  'clarity',
  'coherence',
  'signal',
  'density',
  'state',
  'change',
  'completion',
  'impact',
  'uncertainty',
] as const;
export type VectorName = (typeof VECTORS)[number];

/** The tiers of the schema and the vectors in each; `engagement` and `uncertainty` stand alone. */
export const TIERS = {
  foundation: ['know', 'do', 'context'],
  comprehension: ['clarity', 'coherence', 'signal', 'density'],
  execution: ['state', 'change', 'completion', 'impact'],
} as const satisfies Record<string, readonly VectorName[]>;
export type TierName = keyof typeof TIERS;

/**
 * How much each part counts in the overall epistemic confidence. The seed names the tiers (and a
 * `by_tier` weighting) but gives no numbers; these are ours: foundation weighs most (knowing what
 * the task is about comes first), comprehension and execution equally, engagement least, and the
 * whole is discounted by the stated uncertainty (× (1 − 0.5·uncertainty)).
 */
export const TIER_WEIGHTS: Readonly<Record<TierName | 'engagement', number>> = {
  foundation: 0.35,
  comprehension: 0.25,
  execution: 0.25,
  engagement: 0.15,
};

const VectorScore = z.strictObject({
  score: z.number().min(0).max(1),
  rationale: z.string().trim().min(1).max(300),
});

/** What a persona must answer when asked for its assessment (strict JSON; also sent as the JSON Schema). */
export const AssessmentReply = z.strictObject({
  action: VerdictAction,
  confidence: z.number().min(0).max(1),
  rationale: z.string().trim().min(1).max(500),
  vectors: z.strictObject(Object.fromEntries(VECTORS.map((v) => [v, VectorScore])) as Record<VectorName, typeof VectorScore>),
});
export type AssessmentReply = z.infer<typeof AssessmentReply>;

export const ASSESSMENT_SCHEMA = { name: 'assessment', schema: jsonSchemaOf(AssessmentReply) };

/** A persona's assessment as the council records it; `valid: false` means missing or malformed (it counts as escalate). */
export interface Assessment {
  readonly persona: string;
  readonly valid: boolean;
  readonly problem?: string;
  readonly action: VerdictAction;
  readonly confidence: number;
  readonly rationale: string;
  /** Absent when the assessment was invalid. */
  readonly vectors?: Readonly<Record<VectorName, { score: number; rationale: string }>>;
  readonly tolerated?: readonly Tolerance[];
  readonly extraKeys?: number;
}

/** Reads an assessment through the tolerant reader; what is still invalid fails closed to escalate. */
export function parseAssessment(persona: string, reply: string): Assessment {
  const read = readStructured(reply, AssessmentReply, { percentages: ['confidence', 'score'] as never[] });
  const seen = {
    ...(read.tolerated.length > 0 ? { tolerated: read.tolerated } : {}),
    ...(read.extraKeys > 0 ? { extraKeys: read.extraKeys } : {}),
  };
  if (!read.ok) {
    const problem = `malformed assessment (${read.error})`;
    return { persona, valid: false, problem, action: 'escalate', confidence: 1, rationale: `fail-closed: ${problem}`, ...seen };
  }
  return { persona, valid: true, ...read.value, ...seen };
}

/** The assessment as a verdict, for arbitration. */
export function assessmentVerdict(a: Assessment): Verdict {
  return {
    persona: a.persona,
    valid: a.valid,
    action: a.action,
    confidence: a.confidence,
    rationale: a.rationale,
    ...(a.problem ? { problem: a.problem } : {}),
  };
}

/** What a persona is asked for when it assesses a task (the reply it must give). */
export const ASSESSMENT_INSTRUCTION = [
  'Assess the task on your own, from your role. Reply with ONE JSON object and nothing else:',
  '{"action": "proceed" | "investigate" | "escalate", "confidence": <0..1>, "rationale": "<one line>",',
  ` "vectors": {${VECTORS.map((v) => `"${v}": {"score": <0..1>, "rationale": "<one line>"}`).join(', ')}}}`,
  'Vectors: engagement (how fully you can engage with it); foundation — know (domain knowledge), do (capability to act), context (enough context);',
  'comprehension — clarity, coherence, signal (relevant information vs noise), density (information load);',
  'execution — state (current state understood), change (what must change), completion (what done looks like), impact (consequences understood);',
  'uncertainty (how uncertain you are overall; high = unsure).',
  "proceed = the task's direction is sound; investigate = more facts are needed first; escalate = a person must decide.",
].join('\n');

export function assessmentRetryPrompt(problem: string): string {
  return `That was not a valid assessment (${problem}). Reply with ONE JSON object and nothing else, with "action", "confidence", "rationale" and "vectors" holding all thirteen vectors (${VECTORS.join(', ')}), each {"score": <0..1>, "rationale": "<one line>"}.`;
}

/** An assessment as the council reads it (its persona first, when it has one). */
export function renderAssessment(a: Assessment): string {
  const who = a.persona ? `[${a.persona}] ` : '';
  if (!a.valid || !a.vectors) return `${who}(no valid assessment: ${a.problem ?? 'missing'})`;
  const scored = a.vectors;
  const vectors = VECTORS.map((v) => `${v} ${scored[v].score.toFixed(2)}`).join(', ');
  return `${who}${a.action} (confidence ${a.confidence.toFixed(2)}): ${a.rationale}\nvectors: ${vectors}`;
}

/** Tier confidences (mean of each tier's scores), and the overall confidence by TIER_WEIGHTS, discounted by uncertainty. */
export function tierConfidence(vectors: Readonly<Record<VectorName, { score: number }>>): Record<TierName | 'overall', number> {
  const mean = (names: readonly VectorName[]): number => round(names.reduce((n, v) => n + vectors[v].score, 0) / names.length);
  const tiers = { foundation: mean(TIERS.foundation), comprehension: mean(TIERS.comprehension), execution: mean(TIERS.execution) };
  const weighted =
    TIER_WEIGHTS.foundation * tiers.foundation +
    TIER_WEIGHTS.comprehension * tiers.comprehension +
    TIER_WEIGHTS.execution * tiers.execution +
    TIER_WEIGHTS.engagement * vectors.engagement.score;
  return { ...tiers, overall: round(weighted * (1 - 0.5 * vectors.uncertainty.score)) };
}

export function round(n: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
