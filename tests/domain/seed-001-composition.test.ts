import { describe, expect, it } from 'vitest';
import { arbitrate } from '../../src/domain/arbitration.js';
import { VECTORS, type Assessment, type VectorName } from '../../src/domain/assessment.js';
import { composeAssessments, OWN_TIER_WEIGHT, vectorAgreement } from '../../src/domain/composition.js';
import type { Verdict } from '../../src/domain/verdict.js';

function anAssessment(
  persona: string,
  score: number,
  options: { confidence?: number; action?: Assessment['action']; vectors?: Partial<Record<VectorName, number>> } = {},
): Assessment {
  const vectors = Object.fromEntries(
    VECTORS.map((v) => [v, { score: options.vectors?.[v] ?? score, rationale: `${persona} on ${v}` }]),
  ) as Assessment['vectors'];
  return {
    persona,
    valid: true,
    action: options.action ?? 'proceed',
    confidence: options.confidence ?? 0.8,
    rationale: `${persona} thinks so`,
    vectors,
  };
}
const invalid = (persona: string): Assessment => ({
  persona,
  valid: false,
  problem: 'malformed',
  action: 'escalate',
  confidence: 1,
  rationale: 'x',
});

describe("consensus_threshold with the seed's rule: standard deviation below the threshold → mean, else flag", () => {
  // Scores 0.2, 0.5, 0.8: spread 0.6, population std dev √0.06 ≈ 0.245.
  const three = [anAssessment('a', 0.2), anAssessment('b', 0.5), anAssessment('c', 0.8)];

  it('averages a vector whose standard deviation is below the threshold, though its spread is far wider', () => {
    const c = composeAssessments({ strategy: 'consensus_threshold', assessments: three, measure: 'std_dev', threshold: 0.25 });
    expect(c.vectors.know).toMatchObject({ score: 0.5, spread: 0.6, std_dev: 0.245, flagged: false });
    expect(c.flagged).toEqual([]);
  });

  it('flags it when the standard deviation reaches the threshold', () => {
    const c = composeAssessments({ strategy: 'consensus_threshold', assessments: three, measure: 'std_dev', threshold: 0.245 });
    expect(c.vectors.know).toMatchObject({ score: null, flagged: true });
    expect(c.flagged).toHaveLength(VECTORS.length);
    expect(c.method).toContain('standard deviation');
  });

  it('by spread (the default) the same scores are flagged at 0.25', () => {
    const c = composeAssessments({ strategy: 'consensus_threshold', assessments: three, threshold: 0.25 });
    expect(c.vectors.know.flagged).toBe(true);
  });

  it('one dissenter among many hides under the standard deviation, never under the spread', () => {
    const council = [0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.2].map((s, i) => anAssessment(`p${i}`, s));
    const byStd = composeAssessments({ strategy: 'consensus_threshold', assessments: council, measure: 'std_dev', threshold: 0.25 });
    const bySpread = composeAssessments({ strategy: 'consensus_threshold', assessments: council, threshold: 0.25 });
    expect(byStd.vectors.know.flagged).toBe(false);
    expect(bySpread.vectors.know.flagged).toBe(true);
  });
});

describe('weightings by_tier and by_priors', () => {
  const pair = [anAssessment('found', 0.9), anAssessment('exec', 0.3)];

  it('by_tier: a persona counts double on its own tier and once elsewhere; the weights are shown per tier', () => {
    const c = composeAssessments({
      strategy: 'weighted_average',
      weighting: 'by_tier',
      assessments: pair,
      personaTiers: { found: 'foundation', exec: 'execution' },
    });
    const share = OWN_TIER_WEIGHT / (OWN_TIER_WEIGHT + 1);
    expect(c.vectors.know.score).toBeCloseTo(0.9 * share + 0.3 * (1 - share), 3);
    expect(c.vectors.state.score).toBeCloseTo(0.3 * share + 0.9 * (1 - share), 3);
    expect(c.vectors.clarity.score).toBeCloseTo(0.6, 3);
    expect(c.tier_weights?.foundation.found).toBeCloseTo(share, 3);
    expect(c.tier_weights?.execution.exec).toBeCloseTo(share, 3);
    expect(c.weights).toEqual({ found: 0.5, exec: 0.5 });
  });

  it('by_priors: a persona with the better track record weighs more; one with no record counts 0.5', () => {
    const c = composeAssessments({
      strategy: 'weighted_average',
      weighting: 'by_priors',
      assessments: pair,
      priors: { found: 0.9, exec: 0.1 },
    });
    expect(c.weights).toEqual({ found: 0.9, exec: 0.1 });
    expect(c.vectors.know.score).toBeCloseTo(0.84, 3);
    const none = composeAssessments({ strategy: 'weighted_average', weighting: 'by_priors', assessments: pair, priors: { found: 1 } });
    expect(none.weights.found).toBeCloseTo(1 / 1.5, 3);
  });

  it("the seed's by_confidence and by_domain are confidence and domain", () => {
    const a = [anAssessment('x', 0.9, { confidence: 0.9 }), anAssessment('y', 0.1, { confidence: 0.1 })];
    const seed = composeAssessments({ strategy: 'weighted_average', weighting: 'by_confidence', assessments: a });
    const ours = composeAssessments({ strategy: 'weighted_average', weighting: 'confidence', assessments: a });
    expect(seed.vectors).toEqual(ours.vectors);
    const byDomain = composeAssessments({
      strategy: 'weighted_average',
      weighting: 'by_domain',
      assessments: a,
      relevance: { x: 0.1, y: 0.9 },
    });
    expect(byDomain.weights).toEqual({ x: 0.1, y: 0.9 });
  });
});

describe('the weights shown are the weights used', () => {
  it('bayesian_fusion shows each persona’s share of the evidence (1 + 9·confidence), not equal shares', () => {
    const a = [
      anAssessment('x', 0.9, { confidence: 0.9 }),
      anAssessment('y', 0.5, { confidence: 0.1 }),
      anAssessment('z', 0.5, { confidence: 0.5 }),
    ];
    const c = composeAssessments({ strategy: 'bayesian_fusion', assessments: a });
    const n = [1 + 9 * 0.9, 1 + 9 * 0.1, 1 + 9 * 0.5];
    const total = n.reduce((s, v) => s + v, 0);
    expect(c.weights.x).toBeCloseTo((n[0] ?? 0) / total, 3);
    expect(c.weights.y).toBeCloseTo((n[1] ?? 0) / total, 3);
    expect(c.weights.x).not.toBeCloseTo(1 / 3, 2);
  });

  it('average shows equal weights even with a review standing (the mean is plain)', () => {
    const c = composeAssessments({
      strategy: 'average',
      assessments: [anAssessment('x', 0.9), anAssessment('y', 0.1)],
      standing: { x: 2, y: 0.5 },
    });
    expect(c.weights).toEqual({ x: 0.5, y: 0.5 });
    expect(c.vectors.know.score).toBe(0.5);
  });
});

describe('nothing is made up when no assessment was valid', () => {
  it('has no tier confidence, no vector agreement and no rationale', () => {
    const c = composeAssessments({ strategy: 'weighted_average', assessments: [invalid('a'), invalid('b')] });
    expect(c.tiers).toBeNull();
    expect(vectorAgreement(c)).toBeNull();
    expect(c.rationale).toBe('');
    expect(c.weights).toEqual({});
  });

  it('concatenates the valid rationales in speaker order otherwise', () => {
    const c = composeAssessments({ strategy: 'average', assessments: [anAssessment('b', 0.5), invalid('c'), anAssessment('a', 0.5)] });
    expect(c.rationale).toBe('b: b thinks so | a: a thinks so');
  });
});

describe('parallel_consensus needs a majority for action, in every arbitration', () => {
  const v = (persona: string, action: Verdict['action'], confidence: number): Verdict => ({
    persona,
    valid: true,
    action,
    confidence,
    rationale: persona,
  });

  it('one confident proceed does not outvote two unsure investigates', () => {
    const votes = [v('bold', 'proceed', 1), v('a', 'investigate', 0.3), v('b', 'investigate', 0.3)];
    // Confidence alone would proceed (1 against 0.6); the majority rule is part of arbitration itself.
    const ruled = arbitrate({ strategy: 'confidence_weighted', verdicts: votes, weights: {} });
    expect(ruled.scores.proceed).toBeGreaterThan(ruled.scores.investigate);
    expect(ruled.final_action).toBe('investigate');
    expect(ruled.reasoning).toContain('only 1 of 3 persona(s) voted proceed');
  });

  it('a strict majority proceeds; half is not a majority', () => {
    const two = [v('a', 'proceed', 0.6), v('b', 'proceed', 0.6), v('c', 'escalate', 0.2)];
    expect(arbitrate({ strategy: 'confidence_weighted', verdicts: two, weights: {} }).final_action).toBe('proceed');
    const half = [v('a', 'proceed', 0.9), v('b', 'investigate', 0.1)];
    expect(arbitrate({ strategy: 'confidence_weighted', verdicts: half, weights: {} }).final_action).toBe('investigate');
  });

  it('never turns a cautious result into proceed', () => {
    const votes = [v('a', 'proceed', 0.9), v('b', 'proceed', 0.9), v('c', 'escalate', 0.9)];
    expect(arbitrate({ strategy: 'pessimistic', verdicts: votes, weights: {} }).final_action).toBe('escalate');
  });
});

describe("the seed's domain_weighted example: Implement caching", () => {
  it('the performance persona carries the vote, the security persona weighs least', async () => {
    const { rankRelevance } = await import('../../src/domain/relevance.js');
    const council = [
      { id: 'performance', focus_domains: ['performance', 'caching', 'latency'] },
      { id: 'security', focus_domains: ['security', 'authentication'] },
      { id: 'ux', focus_domains: ['usability', 'user interface'] },
    ];
    const relevance = rankRelevance(council, 'Implement caching');
    const v = (persona: string, action: Verdict['action']): Verdict => ({
      persona,
      valid: true,
      action,
      confidence: 0.8,
      rationale: persona,
    });
    const r = arbitrate({
      strategy: 'domain_weighted',
      verdicts: [v('performance', 'proceed'), v('security', 'investigate'), v('ux', 'proceed')],
      weights: {},
      relevance,
    });
    expect(r.final_action).toBe('proceed');
    expect(r.weights_used.performance).toBeGreaterThan(r.weights_used.security ?? 1);
  });
});

describe('the artifact says nothing was composed when no assessment was valid', () => {
  it('prints no confidence or agreement figure', async () => {
    const { compositionText } = await import('../../src/domain/modes/parallel.js');
    const assessments = [invalid('a'), invalid('b')];
    const composed = composeAssessments({ strategy: 'weighted_average', assessments });
    const arbitration = arbitrate({
      strategy: 'confidence_weighted',
      verdicts: assessments.map((a) => ({ ...a, valid: false })),
      weights: {},
    });
    const text = compositionText({ assessments, standing: undefined, composed, arbitration });
    expect(text).toContain('No assessment was valid: there is no composed confidence and no vector agreement');
    expect(text).toContain('Effective weights: none (no valid assessment).');
    expect(text).not.toMatch(/overall \d|vector agreement \d/);
  });
});
