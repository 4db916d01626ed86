import { describe, expect, it } from 'vitest';
import {
  arbitrateWithReviewer,
  readReviewer,
  REVIEWER_SCHEMA,
  reviewerLabel,
  reviewerSection,
  reviewerStep,
  reviewerStepId,
  reviewerVerdictOf,
} from '../../../src/domain/modes/reviewer-gate.js';
import { parseVerdict, type VerdictAction } from '../../../src/domain/verdict.js';
import { aModeContext, aPlan, aStep, personasFor, verdictJson } from '../../fixtures/domain-builders.js';

const ctx = aModeContext({ plan: aPlan({ mode: 'work_items', personas: ['alpha', 'beta', 'gamma'] }) });
const council = (action: VerdictAction, confidence = 0.9) => [
  parseVerdict('alpha', verdictJson(action, confidence)),
  parseVerdict('beta', verdictJson(action, confidence)),
];
const reviewReply = (action: VerdictAction, findings: string[] = [], confidence: number | string = 0.7) =>
  JSON.stringify({ action, confidence, rationale: `reviewer says ${action}`, findings });

describe('reviewerStep: what the reviewer is asked', () => {
  const step = reviewerStep(ctx, 'gamma', { title: 'Merged work items', text: 'item a: done\nitem b: done' }, 3);

  it('gives it the briefing and the result alone, fresh, as a verdict with findings', () => {
    expect(step).toMatchObject({
      id: 'reviewer:gamma',
      kind: 'verdict',
      purpose: 'verdict',
      persona: 'gamma',
      round: 3,
      knowledge: false,
      responseFormat: REVIEWER_SCHEMA,
    });
    expect(step.prompt).toContain(`${ctx.briefing}\n\n--- Merged work items (the result to review) ---\nitem a: done\nitem b: done`);
    expect(step.prompt).toContain('"findings"');
    expect(step.messages.map((m) => m.role)).toEqual(['system', 'user']);
  });

  it('accepts a review without findings and asks again, quoting the problem, for one it cannot read', () => {
    expect(step.check?.(JSON.stringify({ action: 'proceed', confidence: 0.9, rationale: 'fine' }))).toEqual({ ok: true });
    const wrong = step.check?.('It looks fine.');
    expect(wrong).toMatchObject({ ok: false });
    expect(wrong?.ok === false && wrong.retryPrompt).toMatch(/^That was not a valid review \(.+\)\. Reply with ONE JSON object/);
  });

  it('is recognised among the finished steps by its id', () => {
    expect(reviewerStepId('gamma')).toBe('reviewer:gamma');
    expect(reviewerVerdictOf([aStep('verdict:alpha', { reply: verdictJson('proceed', 1) })])).toBeUndefined();
    const found = reviewerVerdictOf([
      aStep('verdict:alpha'),
      aStep('reviewer:gamma', { reply: reviewReply('investigate', ['item b has no numbers']) }),
    ]);
    expect(found).toMatchObject({
      persona: 'gamma (reviewer)',
      reviewer: 'gamma',
      action: 'investigate',
      findings: ['item b has no numbers'],
    });
  });
});

describe("readReviewer: the reviewer's answer", () => {
  it('reads its verdict under its own label, a percentage as a fraction', () => {
    expect(readReviewer('gamma', reviewReply('proceed', [], '80%'))).toEqual({
      persona: reviewerLabel('gamma'),
      reviewer: 'gamma',
      valid: true,
      action: 'proceed',
      confidence: 0.8,
      rationale: 'reviewer says proceed',
      findings: [],
    });
  });

  it.each([
    ['prose', 'Looks fine to me.'],
    ['an unknown action', reviewReply('approve' as VerdictAction)],
    [
      'more than twenty findings',
      reviewReply(
        'proceed',
        Array.from({ length: 21 }, (_, i) => `finding ${i}`),
      ),
    ],
  ])('counts %s as escalate (fail closed)', (_what, reply) => {
    const review = readReviewer('gamma', reply);
    expect(review).toMatchObject({ valid: false, action: 'escalate', confidence: 1, findings: [] });
    expect(review.rationale).toMatch(/^fail-closed: malformed review/);
  });
});

describe('arbitrateWithReviewer: the gate', () => {
  it('never lets the council proceed over a reviewer who said investigate, and says why in the dissent', () => {
    const result = arbitrateWithReviewer(
      ctx,
      council('proceed'),
      readReviewer('gamma', reviewReply('investigate', ['a says x, b says not x'])),
    );
    expect(result.final_action).toBe('investigate');
    expect(result.reasoning).toContain('the reviewer gate (gamma) said investigate, so the council does not proceed');
    expect(result.conflicts.at(-1)).toBe('reviewer gate (gamma) investigate: reviewer says investigate (findings: a says x, b says not x)');
    expect(result.conflicts.filter((c) => c.startsWith('gamma (reviewer)'))).toEqual([]);
  });

  it('escalates over an unreadable review', () => {
    const result = arbitrateWithReviewer(ctx, council('proceed'), readReviewer('gamma', 'fine'));
    expect(result.final_action).toBe('escalate');
    expect(result.conflicts.at(-1)).toMatch(/^reviewer gate \(gamma\) malformed review/);
  });

  it('cannot loosen the council: a proceeding reviewer leaves a cautious council as it was', () => {
    expect(arbitrateWithReviewer(ctx, council('escalate'), readReviewer('gamma', reviewReply('proceed'))).final_action).toBe('escalate');
  });

  it('joins arbitration as one more vote, weighted like its persona', () => {
    const heavy = aModeContext({ plan: ctx.plan, personas: personasFor(['alpha', 'beta', 'gamma'], { gamma: { weight: 10 } }) });
    const split = [parseVerdict('alpha', verdictJson('proceed', 0.9)), parseVerdict('beta', verdictJson('investigate', 0.9))];
    const result = arbitrateWithReviewer(heavy, split, readReviewer('gamma', reviewReply('proceed', [], 0.9)));
    expect(result.votes).toEqual({ alpha: 'proceed', beta: 'investigate', 'gamma (reviewer)': 'proceed' });
    expect(result.final_action).toBe('proceed');
    expect(result.weights_used['gamma (reviewer)']).toBeGreaterThan(result.weights_used.alpha ?? 0);
  });

  it('is plain arbitration when the gate did not run', () => {
    expect(arbitrateWithReviewer(ctx, council('proceed'), undefined)).toMatchObject({
      final_action: 'proceed',
      votes: { alpha: 'proceed', beta: 'proceed' },
    });
  });
});

describe("reviewerSection: the artifact's lines about the gate", () => {
  it('gives the verdict and each finding', () => {
    expect(reviewerSection(readReviewer('gamma', reviewReply('investigate', ['gap in item b', 'item a contradicts c'])))).toBe(
      'Reviewer: `gamma` — **investigate** (confidence 0.70): reviewer says investigate\n\n- gap in item b\n- item a contradicts c',
    );
  });

  it('marks a review that could not be read, and says when there were no findings', () => {
    const text = reviewerSection(readReviewer('gamma', 'fine'));
    expect(text).toMatch(/^Reviewer: `gamma` — \*\*escalate\*\* \(fail-closed\) \(confidence 1\.00\): fail-closed: malformed review/);
    expect(text.endsWith('\n\n_No findings._')).toBe(true);
  });
});
