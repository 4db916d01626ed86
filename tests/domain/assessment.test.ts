import { describe, expect, it } from 'vitest';
import {
  ASSESSMENT_SCHEMA,
  assessmentRetryPrompt,
  assessmentVerdict,
  parseAssessment,
  round,
  TIER_WEIGHTS,
  tierConfidence,
  VECTORS,
  type VectorName,
} from '../../src/domain/assessment.js';
import { assessmentJson } from '../fixtures/domain-builders.js';

const scores = (score: number, over: Partial<Record<VectorName, number>> = {}) =>
  Object.fromEntries(VECTORS.map((v) => [v, { score: over[v] ?? score }])) as Record<VectorName, { score: number }>;

/** An assessment reply as JSON, to break one part of. */
type Reply = { action: string; vectors: Partial<Record<VectorName, { score: number; rationale: string }>> };

describe("parseAssessment: a persona's assessment as the council records it", () => {
  it('reads the action, confidence, rationale and all thirteen vectors', () => {
    const a = parseAssessment('auditor', assessmentJson('investigate', 0.7, 0.6, { uncertainty: 0.3 }));
    expect(a).toMatchObject({ persona: 'auditor', valid: true, action: 'investigate', confidence: 0.7 });
    expect(Object.keys(a.vectors ?? {})).toEqual([...VECTORS]);
    expect(a.vectors?.uncertainty).toEqual({ score: 0.3, rationale: 'uncertainty seen' });
  });

  it('reads percentages as fractions, and says it did', () => {
    const reply = JSON.parse(assessmentJson('proceed', 0.5, 0.5));
    reply.confidence = '85%';
    reply.vectors.know.score = 70;
    const a = parseAssessment('auditor', JSON.stringify(reply));
    expect(a).toMatchObject({ valid: true, confidence: 0.85 });
    expect(a.vectors?.know.score).toBe(0.7);
    expect(a.tolerated).toEqual(expect.arrayContaining(['percentage', 'number_text']));
  });

  it('counts keys beyond the schema and ignores them', () => {
    const reply = { ...JSON.parse(assessmentJson('proceed', 0.9, 0.8)), mood: 'good' };
    expect(parseAssessment('auditor', JSON.stringify(reply))).toMatchObject({ valid: true, extraKeys: 1 });
  });

  it.each([
    ['a vector missing', (r: Reply) => delete r.vectors.impact],
    ['a score over 1', (r: Reply) => (r.vectors.clarity = { score: 1.5, rationale: 'very clear' })],
    ['a vector without rationale', (r: Reply) => (r.vectors.do = { score: 0.5, rationale: ' ' })],
    ['an unknown action', (r: Reply) => (r.action = 'approve')],
  ])('fails closed on %s: escalate at full confidence, no vectors, the problem said', (_what, breakIt) => {
    const reply = JSON.parse(assessmentJson('proceed', 0.9, 0.8)) as Reply;
    breakIt(reply);
    const a = parseAssessment('auditor', JSON.stringify(reply));
    expect(a).toMatchObject({ persona: 'auditor', valid: false, action: 'escalate', confidence: 1 });
    expect(a.vectors).toBeUndefined();
    expect(a.problem).toMatch(/^malformed assessment \(/);
    expect(a.rationale).toBe(`fail-closed: ${a.problem}`);
  });

  it('fails closed on a reply with no assessment at all', () => {
    expect(parseAssessment('auditor', 'I think we should go ahead.')).toMatchObject({ valid: false, action: 'escalate', confidence: 1 });
    expect(parseAssessment('auditor', '')).toMatchObject({ valid: false, action: 'escalate' });
  });
});

describe('assessmentVerdict: the assessment as arbitration sees it', () => {
  it('carries the action, confidence and rationale, and the problem of an invalid one', () => {
    expect(assessmentVerdict(parseAssessment('a', assessmentJson('proceed', 0.8, 0.5)))).toEqual({
      persona: 'a',
      valid: true,
      action: 'proceed',
      confidence: 0.8,
      rationale: 'proceed after assessing',
    });
    const invalid = assessmentVerdict(parseAssessment('b', 'no json'));
    expect(invalid).toMatchObject({
      persona: 'b',
      valid: false,
      action: 'escalate',
      problem: expect.stringContaining('malformed assessment'),
    });
  });
});

describe('tierConfidence: how sure the assessment is, tier by tier', () => {
  it("is each tier's mean, and overall the weighted tiers and engagement", () => {
    const t = tierConfidence(
      scores(0.5, { know: 1, do: 0.5, context: 0, clarity: 1, coherence: 1, signal: 0, density: 0, engagement: 1, uncertainty: 0 }),
    );
    expect(t).toMatchObject({ foundation: 0.5, comprehension: 0.5, execution: 0.5 });
    expect(t.overall).toBe(round(0.35 * 0.5 + 0.25 * 0.5 + 0.25 * 0.5 + 0.15 * 1));
  });

  it('is 1 when every vector is sure and nothing is uncertain; full uncertainty halves it', () => {
    expect(tierConfidence(scores(1, { uncertainty: 0 })).overall).toBe(1);
    expect(tierConfidence(scores(1, { uncertainty: 1 })).overall).toBe(0.5);
    expect(tierConfidence(scores(0, { uncertainty: 0 })).overall).toBe(0);
  });

  it('weighs foundation most and engagement least, the weights summing to one', () => {
    expect(Object.values(TIER_WEIGHTS).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 10);
    const knows = tierConfidence(scores(0, { know: 1, do: 1, context: 1 })).overall;
    const engaged = tierConfidence(scores(0, { engagement: 1 })).overall;
    expect(knows).toBeGreaterThan(engaged);
  });

  it('rounds to three digits', () => {
    expect(tierConfidence(scores(1 / 3, { uncertainty: 0 })).foundation).toBe(0.333);
    expect(round(0.12345, 2)).toBe(0.12);
  });
});

describe('asking again for an assessment', () => {
  it('quotes the problem and names every vector', () => {
    const text = assessmentRetryPrompt('vectors.impact: required');
    expect(text).toContain('(vectors.impact: required)');
    for (const v of VECTORS) expect(text).toContain(v);
  });

  it('sends a JSON Schema that requires every vector', () => {
    const schema = ASSESSMENT_SCHEMA.schema as { properties: { vectors: { required: string[] } } };
    expect(schema.properties.vectors.required).toEqual([...VECTORS]);
  });
});
