import { round, TIERS, tierConfidence, VECTORS, type Assessment, type TierName, type VectorName } from './assessment.js';
import { weightingKind, type Composition, type ConsensusMeasure, type Weighting } from './modes/settings.js';

/** One vector of the composed assessment. */
export interface ComposedVector {
  /** The composed score, 0–1; null when the vector was flagged for arbitration instead (consensus_threshold) or nobody scored it. */
  readonly score: number | null;
  /** max − min of the personas' scores. */
  readonly spread: number;
  /** The population standard deviation of the personas' scores (the seed's consensus measure). */
  readonly std_dev: number;
  /** Flagged: the personas disagree more than the threshold allows (consensus_threshold). */
  readonly flagged: boolean;
  /** Personas' one-line rationales, in speaker order. */
  readonly rationales: readonly string[];
}

/** COMPOSE's result: all thirteen vectors, always. */
export interface ComposedAssessment {
  readonly strategy: Composition;
  /** Persona id → the weight it effectively had in the composition (normalised to sum 1 over valid assessments). */
  readonly weights: Readonly<Record<string, number>>;
  /** `by_tier`: the effective weights on each tier's vectors (they differ from `weights` there). */
  readonly tier_weights?: Readonly<Record<TierName, Readonly<Record<string, number>>>>;
  readonly vectors: Readonly<Record<VectorName, ComposedVector>>;
  /** Tier confidences of the composed scores (flagged vectors count at their plain mean here); null when no assessment was valid. */
  readonly tiers: Readonly<Record<TierName | 'overall', number>> | null;
  /** The rationales concatenated (seed 001's composed_rationale): each persona's overall one, in speaker order. */
  readonly rationale: string;
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
  /** `weighted_average`: confidence, domain relevance, reliability or tier. */
  readonly weighting?: Weighting;
  /**
   * `by_priors` and `bayesian_fusion`: persona id → its reliability, 0–1 — its declared prior updated
   * by the outcomes a person confirmed (track-record.ts); absent = 0.5, neither trusted nor doubted.
   */
  readonly priors?: Readonly<Record<string, number>>;
  /** `by_tier`: persona id → the tier its front matter declares. */
  readonly personaTiers?: Readonly<Record<string, TierName | undefined>>;
  /** `consensus_threshold`: how disagreement is measured (default `spread`). */
  readonly measure?: ConsensusMeasure;
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
 * - `consensus_threshold`: the mean where the personas agree; a vector where they do not is flagged
 *   for arbitration and gets no composed score. Disagreement is the spread (max − min > threshold),
 *   or with `measure: std_dev` the seed's rule (standard deviation ≥ threshold).
 * - `bayesian_fusion`: each score is evidence about the vector's true value, modelled as a Beta
 *   distribution: a persona with confidence c and reliability r contributes pseudo-counts
 *   n = (1 + 9c) · 2r (1–10 observations at r = 0.5) split as score·n successes and (1 − score)·n
 *   failures, on a uniform Beta(1, 1) prior; the composed score is the posterior mean
 *   (1 + Σ score·n) / (2 + Σ n). Confident personas, and those whose verdicts people confirmed right,
 *   move it more; with few or unsure personas it stays near 0.5.
 * Missing or malformed assessments are left out (and listed); every vector is always present.
 */
export function composeAssessments(input: ComposeInput): ComposedAssessment {
  const valid = input.assessments.filter((a): a is ValidAssessment => a.valid && a.vectors !== undefined);
  const missing = input.assessments.filter((a) => !a.valid || !a.vectors).map((a) => a.persona);
  const weightsOn = vectorWeights(input, valid);
  const vectors = {} as Record<VectorName, ComposedVector>;
  const plain = {} as Record<VectorName, { score: number }>;
  const flagged: VectorName[] = [];
  for (const name of VECTORS) {
    const { vector, plainScore } = composeOne(input, valid, name, weightsOn(name));
    vectors[name] = vector;
    plain[name] = { score: plainScore };
    if (vector.flagged) flagged.push(name);
  }
  const tierWeights = weightingKind(input.weighting ?? 'confidence') === 'tier' && input.strategy === 'weighted_average';
  return {
    strategy: input.strategy,
    weights: weightsOn('engagement'),
    ...(tierWeights
      ? { tier_weights: { foundation: weightsOn('know'), comprehension: weightsOn('clarity'), execution: weightsOn('state') } }
      : {}),
    vectors,
    tiers: valid.length > 0 ? tierConfidence(plain) : null,
    rationale: valid.map((a) => `${a.persona}: ${a.rationale}`).join(' | '),
    flagged,
    missing,
    method: describeMethod(input),
  };
}

function composeOne(
  input: ComposeInput,
  valid: readonly ValidAssessment[],
  name: VectorName,
  weights: Readonly<Record<string, number>>,
): { vector: ComposedVector; plainScore: number } {
  const scores = valid.map((a) => ({ persona: a.persona, score: a.vectors[name].score, confidence: a.confidence }));
  const rationales = valid.map((a) => `${a.persona}: ${a.vectors[name].rationale}`);
  if (scores.length === 0) return { vector: { score: null, spread: 0, std_dev: 0, flagged: false, rationales }, plainScore: 0.5 };
  const values = scores.map((s) => s.score);
  const spread = round(Math.max(...values) - Math.min(...values));
  const mean = values.reduce((n, v) => n + v, 0) / values.length;
  const stdDev = round(Math.sqrt(values.reduce((n, v) => n + (v - mean) ** 2, 0) / values.length));
  const disagree = isDisagreement(input, spread, stdDev);
  const score = input.strategy === 'consensus_threshold' ? (disagree ? null : mean) : composeVector(input, { scores, weights, mean });
  const isFlagged = input.strategy === 'consensus_threshold' && score === null;
  return {
    vector: { score: score === null ? null : round(score), spread, std_dev: stdDev, flagged: isFlagged, rationales },
    plainScore: score ?? mean,
  };
}

/** The consensus rule: spread over the threshold, or (the seed's) a standard deviation not below it. */
function isDisagreement(input: ComposeInput, spread: number, stdDev: number): boolean {
  const threshold = input.threshold ?? 0.25;
  return (input.measure ?? 'spread') === 'std_dev' ? stdDev >= threshold : spread > threshold;
}

type ValidAssessment = Assessment & { vectors: NonNullable<Assessment['vectors']> };
type Score = { readonly persona: string; readonly score: number; readonly confidence: number };

/** How much a persona's own stance counts under the strategy, before normalising (the effective weight's numerator). */
function rawWeight(input: ComposeInput, a: ValidAssessment, vector: VectorName): number {
  const standing = input.standing?.[a.persona] ?? 1;
  switch (input.strategy) {
    case 'average':
    case 'consensus_threshold':
      // Plain means: every valid persona counts the same (a review standing is shown, not used).
      return 1;
    case 'bayesian_fusion':
      return evidence(input, a.persona, a.confidence);
    case 'weighted_average':
      return Math.max(weightingBase(input, a, vector), 0) * standing;
  }
}

/** The tier a vector belongs to, if any (`engagement` and `uncertainty` stand alone). */
const TIER_OF: Partial<Record<VectorName, TierName>> = Object.fromEntries(
  (Object.entries(TIERS) as [TierName, readonly VectorName[]][]).flatMap(([tier, names]) => names.map((v) => [v, tier])),
);
/** `by_tier`: a persona counts this much on the vectors of its own tier (once elsewhere). */
export const OWN_TIER_WEIGHT = 2;
/** `by_priors`: the weight of a persona with no declared prior and no confirmed outcome (neither trusted nor doubted). */
export const NO_RECORD_PRIOR = 0.5;

function weightingBase(input: ComposeInput, a: ValidAssessment, vector: VectorName): number {
  switch (weightingKind(input.weighting ?? 'confidence')) {
    case 'confidence':
      return a.confidence;
    case 'domain':
      return input.relevance?.[a.persona] ?? 0.5;
    case 'priors':
      return input.priors?.[a.persona] ?? NO_RECORD_PRIOR;
    case 'tier': {
      const tier = TIER_OF[vector];
      return tier !== undefined && input.personaTiers?.[a.persona] === tier ? OWN_TIER_WEIGHT : 1;
    }
  }
}

/** Each valid persona's effective share on a vector, normalised to 1 (equal shares when nothing weighs). */
function vectorWeights(input: ComposeInput, valid: readonly ValidAssessment[]): (vector: VectorName) => Record<string, number> {
  return (vector) => {
    const raw = valid.map((a) => [a.persona, rawWeight(input, a, vector)] as const);
    const total = raw.reduce((n, [, w]) => n + w, 0);
    return Object.fromEntries(raw.map(([p, w]) => [p, total > 0 ? round(w / total, 4) : round(1 / valid.length, 4)]));
  };
}

/** One vector's composed score under the strategy (`consensus_threshold`'s flag is decided before). */
function composeVector(
  input: ComposeInput,
  v: { scores: readonly Score[]; weights: Readonly<Record<string, number>>; mean: number },
): number {
  switch (input.strategy) {
    case 'average':
    case 'consensus_threshold':
      return v.mean;
    case 'weighted_average': {
      const w = v.scores.reduce((n, s) => n + (v.weights[s.persona] ?? 0), 0);
      return w > 0 ? v.scores.reduce((n, s) => n + s.score * (v.weights[s.persona] ?? 0), 0) / w : v.mean;
    }
    case 'bayesian_fusion': {
      let alpha = 1;
      let beta = 1;
      for (const s of v.scores) {
        const n = evidence(input, s.persona, s.confidence);
        alpha += s.score * n;
        beta += (1 - s.score) * n;
      }
      return alpha / (alpha + beta);
    }
  }
}

/** `bayesian_fusion`: how many observations a persona's score is worth — (1 + 9·confidence) · 2·reliability, times its review standing. */
function evidence(input: ComposeInput, persona: string, confidence: number): number {
  return (1 + 9 * confidence) * 2 * (input.priors?.[persona] ?? NO_RECORD_PRIOR) * (input.standing?.[persona] ?? 1);
}

const WEIGHING_WORDS = {
  confidence: 'its own confidence',
  domain: "its declared field's relevance to the task (BM25)",
  priors: `its reliability (its declared prior, updated by the outcomes a person confirmed; ${NO_RECORD_PRIOR} with neither)`,
  tier: `its tier: ×${OWN_TIER_WEIGHT} on the vectors of the tier its front matter declares`,
} as const;

function describeMethod(input: ComposeInput): string {
  const standing = input.standing ? ', times the anonymous review standing' : '';
  switch (input.strategy) {
    case 'average':
      return `plain mean of the valid assessments${standing ? ' (the review standing is shown, not used)' : ''}`;
    case 'weighted_average':
      return `weighted mean, each persona weighted by ${WEIGHING_WORDS[weightingKind(input.weighting ?? 'confidence')]}${standing}`;
    case 'consensus_threshold':
      return (input.measure ?? 'spread') === 'std_dev'
        ? `mean where the standard deviation of the personas' scores is below ${input.threshold ?? 0.25}; other vectors are flagged for arbitration`
        : `mean where the personas' scores are within ${input.threshold ?? 0.25} of each other; wider vectors are flagged for arbitration`;
    case 'bayesian_fusion':
      return `Beta(1,1) prior updated by each score as evidence of (1 + 9·confidence) · 2·reliability observations (reliability: the persona's declared prior, updated by the outcomes a person confirmed)${standing}; the posterior mean`;
  }
}

/** Agreement between the personas' vectors: 1 − the mean spread (1 = identical scores); null when no assessment was valid. */
export function vectorAgreement(composed: ComposedAssessment): number | null {
  if (composed.tiers === null) return null;
  const spreads = VECTORS.map((v) => composed.vectors[v].spread);
  return round(1 - spreads.reduce((n, s) => n + s, 0) / spreads.length);
}

/** Persona weights as people read them: each id with its weight (two decimals), in order. */
export const weightList = (w: Readonly<Record<string, number>>): string =>
  Object.entries(w)
    .map(([p, n]) => `\`${p}\` ${n.toFixed(2)}`)
    .join(', ');

/** The weights the composition really used (per tier when they differ by tier). */
export function effectiveWeights(composed: ComposedAssessment): string[] {
  if (Object.keys(composed.weights).length === 0) return ['Effective weights: none (no valid assessment).'];
  if (!composed.tier_weights) return [`Effective weights: ${weightList(composed.weights)}.`];
  return [
    `Effective weights on engagement and uncertainty: ${weightList(composed.weights)}.`,
    ...Object.entries(composed.tier_weights).map(([tier, w]) => `Effective weights on the ${tier} vectors: ${weightList(w)}.`),
  ];
}
