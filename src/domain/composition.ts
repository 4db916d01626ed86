import { round, tierConfidence, VECTORS, type Assessment, type TierName, type VectorName } from './assessment.js';
import type { Composition, Weighting } from './modes/settings.js';

/** One vector of the composed assessment. */
export interface ComposedVector {
  /** The composed score, 0–1; null when the vector was flagged for arbitration instead (consensus_threshold) or nobody scored it. */
  readonly score: number | null;
  /** max − min of the personas' scores. */
  readonly spread: number;
  /** Flagged: the personas disagree more than the threshold allows (consensus_threshold). */
  readonly flagged: boolean;
  /** Personas' one-line rationales, in speaker order. */
  readonly rationales: readonly string[];
}

/** COMPOSE's result: all thirteen vectors, always. */
export interface ComposedAssessment {
  readonly strategy: Composition;
  /** Persona id → the weight it had in the composition (normalised to sum 1 over valid assessments). */
  readonly weights: Readonly<Record<string, number>>;
  readonly vectors: Readonly<Record<VectorName, ComposedVector>>;
  /** Tier confidences of the composed scores (flagged vectors count at their plain mean here). */
  readonly tiers: Readonly<Record<TierName | 'overall', number>>;
  /** Vectors flagged for arbitration. */
  readonly flagged: readonly VectorName[];
  /** Personas whose assessment was missing or malformed, left out of the scores. */
  readonly missing: readonly string[];
  /** One line for people: how the weights were chosen. */
  readonly method: string;
}

export interface ComposeInput {
  readonly strategy: Composition;
  readonly assessments: readonly Assessment[];
  /** `weighted_average`: confidence or domain relevance. */
  readonly weighting?: Weighting;
  /** Persona id → relevance of its focus domains to the task, 0–1. */
  readonly relevance?: Readonly<Record<string, number>>;
  /** Persona id → an extra weight (e.g. the anonymous review's standing); multiplies the strategy's own. */
  readonly standing?: Readonly<Record<string, number>>;
  /** `consensus_threshold`: the largest spread still averaged. */
  readonly threshold?: number;
}

/**
 * COMPOSE (seed 001): merges the personas' assessments into one, vector by vector.
 * - `average`: the plain mean.
 * - `weighted_average`: a weighted mean, each persona weighted by its confidence or its domain relevance.
 * - `consensus_threshold`: the mean where the spread (max − min) is within the threshold; a vector
 *   beyond it is flagged for arbitration and gets no composed score.
 * - `bayesian_fusion`: each score is evidence about the vector's true value, modelled as a Beta
 *   distribution: a persona with confidence c contributes pseudo-counts n = 1 + 9c (1–10 observations)
 *   split as score·n successes and (1 − score)·n failures, on a uniform Beta(1, 1) prior; the composed
 *   score is the posterior mean (1 + Σ score·n) / (2 + Σ n). Confident personas move it more, and
 *   with few or unsure personas it stays near 0.5.
 * Missing or malformed assessments are left out (and listed); every vector is always present.
 */
export function composeAssessments(input: ComposeInput): ComposedAssessment {
  const valid = input.assessments.filter((a): a is ValidAssessment => a.valid && a.vectors !== undefined);
  const missing = input.assessments.filter((a) => !a.valid || !a.vectors).map((a) => a.persona);
  const weights = personaWeights(input, valid);
  const threshold = input.threshold ?? 0.25;
  const vectors = {} as Record<VectorName, ComposedVector>;
  const plain = {} as Record<VectorName, { score: number }>;
  const flagged: VectorName[] = [];
  for (const name of VECTORS) {
    const scores = valid.map((a) => ({ persona: a.persona, score: a.vectors[name].score, confidence: a.confidence }));
    const rationales = valid.map((a) => `${a.persona}: ${a.vectors[name].rationale}`);
    if (scores.length === 0) {
      vectors[name] = { score: null, spread: 0, flagged: false, rationales };
      plain[name] = { score: 0.5 };
      continue;
    }
    const values = scores.map((s) => s.score);
    const spread = round(Math.max(...values) - Math.min(...values));
    const mean = values.reduce((n, v) => n + v, 0) / values.length;
    const score = composeVector(input, { scores, weights, spread, mean, threshold });
    const isFlagged = input.strategy === 'consensus_threshold' && score === null;
    if (isFlagged) flagged.push(name);
    vectors[name] = { score: score === null ? null : round(score), spread, flagged: isFlagged, rationales };
    plain[name] = { score: score ?? mean };
  }
  return { strategy: input.strategy, weights, vectors, tiers: tierConfidence(plain), flagged, missing, method: describeMethod(input) };
}

type ValidAssessment = Assessment & { vectors: NonNullable<Assessment['vectors']> };
type Score = { readonly persona: string; readonly score: number; readonly confidence: number };

/** Each valid persona's share of the weighted strategies, normalised to 1 (equal shares when nothing weighs). */
function personaWeights(input: ComposeInput, valid: readonly ValidAssessment[]): Record<string, number> {
  const raw: Record<string, number> = {};
  for (const a of valid) {
    const byDomain = (input.weighting ?? 'confidence') === 'domain';
    const base = input.strategy === 'weighted_average' ? (byDomain ? (input.relevance?.[a.persona] ?? 0.5) : a.confidence) : 1;
    raw[a.persona] = Math.max(base, 0) * (input.standing?.[a.persona] ?? 1);
  }
  const total = Object.values(raw).reduce((n, w) => n + w, 0);
  const weights: Record<string, number> = {};
  for (const a of valid) weights[a.persona] = total > 0 ? round((raw[a.persona] ?? 0) / total, 4) : round(1 / valid.length, 4);
  return weights;
}

/** One vector's composed score under the strategy; null when `consensus_threshold` flags it. */
function composeVector(
  input: ComposeInput,
  v: { scores: readonly Score[]; weights: Readonly<Record<string, number>>; spread: number; mean: number; threshold: number },
): number | null {
  switch (input.strategy) {
    case 'average':
      return v.mean;
    case 'weighted_average': {
      const w = v.scores.reduce((n, s) => n + (v.weights[s.persona] ?? 0), 0);
      return w > 0 ? v.scores.reduce((n, s) => n + s.score * (v.weights[s.persona] ?? 0), 0) / w : v.mean;
    }
    case 'consensus_threshold':
      return v.spread > v.threshold ? null : v.mean;
    case 'bayesian_fusion': {
      let alpha = 1;
      let beta = 1;
      for (const s of v.scores) {
        const n = (1 + 9 * s.confidence) * (input.standing?.[s.persona] ?? 1);
        alpha += s.score * n;
        beta += (1 - s.score) * n;
      }
      return alpha / (alpha + beta);
    }
  }
}

function describeMethod(input: ComposeInput): string {
  const standing = input.standing ? ', times the anonymous review standing' : '';
  switch (input.strategy) {
    case 'average':
      return `plain mean of the valid assessments${standing ? ' (the review standing is shown, not used)' : ''}`;
    case 'weighted_average':
      return `weighted mean, each persona weighted by its ${(input.weighting ?? 'confidence') === 'domain' ? "focus domains' relevance to the task" : 'own confidence'}${standing}`;
    case 'consensus_threshold':
      return `mean where the personas' scores are within ${input.threshold ?? 0.25} of each other; wider vectors are flagged for arbitration`;
    case 'bayesian_fusion':
      return `Beta(1,1) prior updated by each score as evidence of 1 + 9·confidence observations${standing}; the posterior mean`;
  }
}

/** Agreement between the personas' vectors: 1 − the mean spread (1 = identical scores). */
export function vectorAgreement(composed: ComposedAssessment): number {
  const spreads = VECTORS.map((v) => composed.vectors[v].spread);
  return round(1 - spreads.reduce((n, s) => n + s, 0) / spreads.length);
}
