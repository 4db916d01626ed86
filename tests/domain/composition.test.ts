import { describe, expect, it } from 'vitest';
import { VECTORS, type Assessment, type VectorName } from '../../src/domain/assessment.js';
import { composeAssessments } from '../../src/domain/composition.js';

/** An assessment whose every vector scores `score` (or per-vector overrides). */
function anAssessment(
  persona: string,
  score: number,
  options: { confidence?: number; action?: Assessment['action']; vectors?: Partial<Record<VectorName, number>> } = {},
): Assessment {
  const vectors = Object.fromEntries(
    VECTORS.map((v) => [v, { score: options.vectors?.[v] ?? score, rationale: `${persona} on ${v}` }]),
  ) as Assessment['vectors'];
  return { persona, valid: true, action: options.action ?? 'proceed', confidence: options.confidence ?? 0.8, rationale: 'ok', vectors };
}
const invalid = (persona: string): Assessment => ({
  persona,
  valid: false,
  problem: 'malformed',
  action: 'escalate',
  confidence: 1,
  rationale: 'fail-closed',
});

describe('COMPOSE', () => {
  const agreeing = [anAssessment('a', 0.6), anAssessment('b', 0.6), anAssessment('c', 0.6)];
  const disagreeing = [anAssessment('a', 0.9, { confidence: 0.9 }), anAssessment('b', 0.1, { confidence: 0.3 })];

  it.each(['average', 'weighted_average', 'consensus_threshold'] as const)(
    '%s: agreeing personas compose to their common score, every vector kept',
    (strategy) => {
      const c = composeAssessments({ strategy, assessments: agreeing });
      expect(Object.keys(c.vectors)).toEqual([...VECTORS]);
      for (const v of VECTORS) expect(c.vectors[v]).toMatchObject({ score: 0.6, spread: 0, flagged: false });
      expect(c.flagged).toEqual([]);
    },
  );

  it('average: the plain mean of disagreeing personas', () => {
    expect(composeAssessments({ strategy: 'average', assessments: disagreeing }).vectors.know.score).toBe(0.5);
  });

  it('weighted_average by confidence: the surer persona pulls the score', () => {
    const c = composeAssessments({ strategy: 'weighted_average', assessments: disagreeing, weighting: 'confidence' });
    expect(c.weights).toEqual({ a: 0.75, b: 0.25 });
    expect(c.vectors.know.score).toBe(0.7); // 0.9·0.75 + 0.1·0.25
  });

  it('weighted_average by domain: the persona whose focus domains match the task pulls it', () => {
    const c = composeAssessments({
      strategy: 'weighted_average',
      assessments: disagreeing,
      weighting: 'domain',
      relevance: { a: 0.2, b: 0.8 },
    });
    expect(c.weights).toEqual({ a: 0.2, b: 0.8 });
    expect(c.vectors.know.score).toBe(0.26);
  });

  it('consensus_threshold: a vector whose spread exceeds the threshold is flagged, not averaged', () => {
    const c = composeAssessments({
      strategy: 'consensus_threshold',
      threshold: 0.3,
      assessments: [anAssessment('a', 0.5, { vectors: { impact: 0.9 } }), anAssessment('b', 0.6, { vectors: { impact: 0.2 } })],
    });
    expect(c.vectors.impact).toMatchObject({ score: null, flagged: true, spread: 0.7 });
    expect(c.vectors.know).toMatchObject({ score: 0.55, flagged: false });
    expect(c.flagged).toEqual(['impact']);
  });

  it('bayesian_fusion: the posterior mean of a Beta(1,1) prior, confident evidence counting more', () => {
    // a: 0.9 with n = 1 + 9·0.9 = 9.1; b: 0.1 with n = 1 + 9·0.3 = 3.7 → (1 + 8.19 + 0.37) / (2 + 12.8)
    const c = composeAssessments({ strategy: 'bayesian_fusion', assessments: disagreeing });
    expect(c.vectors.know.score).toBeCloseTo((1 + 0.9 * 9.1 + 0.1 * 3.7) / (2 + 9.1 + 3.7), 3);
    // One unsure persona barely moves the prior.
    expect(
      composeAssessments({ strategy: 'bayesian_fusion', assessments: [anAssessment('a', 1, { confidence: 0 })] }).vectors.know.score,
    ).toBeCloseTo(2 / 3, 3);
  });

  it('ties: two personas with equal weight and opposite scores meet in the middle', () => {
    const c = composeAssessments({
      strategy: 'weighted_average',
      assessments: [anAssessment('a', 0.2, { confidence: 0.5 }), anAssessment('b', 0.8, { confidence: 0.5 })],
    });
    expect(c.vectors.clarity.score).toBe(0.5);
  });

  it.each(['average', 'weighted_average', 'consensus_threshold', 'bayesian_fusion'] as const)(
    '%s: missing or malformed assessments are left out and listed; none at all keeps every vector, scoreless',
    (strategy) => {
      const c = composeAssessments({ strategy, assessments: [anAssessment('a', 0.4), invalid('b')] });
      expect(c.missing).toEqual(['b']);
      expect(c.weights).toEqual({ a: 1 });
      const none = composeAssessments({ strategy, assessments: [invalid('a')] });
      expect(Object.keys(none.vectors)).toHaveLength(13);
      expect(none.vectors.know.score).toBeNull();
    },
  );

  it.each(['average', 'weighted_average', 'consensus_threshold'] as const)('%s: one persona composes to itself', (strategy) => {
    const c = composeAssessments({ strategy, assessments: [anAssessment('solo', 0.37)] });
    expect(c.vectors.signal.score).toBe(0.37);
    expect(c.weights).toEqual({ solo: 1 });
  });

  it('tier confidences are the tier means, weighted and discounted by uncertainty', () => {
    const c = composeAssessments({ strategy: 'average', assessments: [anAssessment('a', 0.8, { vectors: { uncertainty: 0.2 } })] });
    expect(c.tiers).toMatchObject({ foundation: 0.8, comprehension: 0.8, execution: 0.8 });
    expect(c.tiers?.overall).toBe(0.72); // 0.8 × (1 − 0.5 × 0.2)
  });

  it('a review standing multiplies the weights', () => {
    // a: confidence 0.9 × standing 0.5; b: 0.3 × 1.5 — the same weight once the standing counts.
    const c = composeAssessments({ strategy: 'weighted_average', assessments: disagreeing, standing: { a: 0.5, b: 1.5 } });
    expect(c.weights).toEqual({ a: 0.5, b: 0.5 });
  });
});
