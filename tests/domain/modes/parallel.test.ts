import { describe, expect, it } from 'vitest';
import type { ModeContext, StepSpec } from '../../../src/domain/modes/mode.js';
import { parallelMode, sequentialRefinementMode } from '../../../src/domain/modes/parallel.js';
import type { Step } from '../../../src/domain/run-state.js';
import { aModeContext, aPlan, assessmentJson, aStep } from '../../fixtures/domain-builders.js';
import { byClass, heatmapCells, parseXml } from '../../helpers/svg.js';

const COUNCIL = ['alpha', 'beta', 'gamma'];
const parallel = (settings: Record<string, unknown> = {}, personas = COUNCIL): ModeContext =>
  aModeContext({ plan: aPlan({ mode: 'parallel', personas, rounds: 1, synthesizer: 'alpha', settings }) });

/** What the mode asks for next, or the test fails. */
function asked(mode: typeof parallelMode, ctx: ModeContext, done: readonly Step[]): { steps: readonly StepSpec[]; concurrent: boolean } {
  const next = mode.next(ctx, done);
  if (next.kind !== 'steps') throw new Error(`expected steps, got ${next.kind}`);
  return next;
}
const assessed = (persona: string, reply = assessmentJson('proceed', 0.8, 0.7)) =>
  aStep(`assessment:${persona}`, { reply, started_at: '2026-01-01T00:00:00.000Z', duration_ms: 1000 });
const allAssessed = (personas = COUNCIL) => personas.map((p) => assessed(p));

describe('parallel: the calls it asks for', () => {
  it('asks every persona for its assessment at once, each on its own', () => {
    const { steps, concurrent } = asked(parallelMode, parallel(), []);
    expect(concurrent).toBe(true);
    expect(steps.map((s) => [s.id, s.kind, s.knowledge])).toEqual(COUNCIL.map((p) => [`assessment:${p}`, 'assessment', false]));
    expect(steps[0]?.prompt.startsWith(parallel().briefing)).toBe(true);
    expect(steps[0]?.responseFormat?.name).toBe('assessment');
  });

  it('asks only the personas that have not assessed yet (a resumed run)', () => {
    expect(asked(parallelMode, parallel(), [assessed('beta')]).steps.map((s) => s.id)).toEqual(['assessment:alpha', 'assessment:gamma']);
  });

  it('asks again, quoting the problem, for an assessment that cannot be read', () => {
    const [step] = asked(parallelMode, parallel(), []).steps;
    expect(step?.check?.(assessmentJson('proceed', 0.8, 0.7))).toEqual({ ok: true });
    const wrong = step?.check?.('{"action":"proceed"}');
    expect(wrong).toMatchObject({ ok: false });
    expect(wrong?.ok === false && wrong.retryPrompt).toContain('That was not a valid assessment');
  });

  it('then asks the synthesizer, with the composition and the arbitration, and concludes', () => {
    const { steps, concurrent } = asked(parallelMode, parallel(), allAssessed());
    expect(concurrent).toBe(false);
    expect(steps.map((s) => [s.id, s.persona])).toEqual([['synthesis', 'alpha']]);
    expect(steps[0]?.prompt).toContain('Composed (weighted_average): overall epistemic confidence');
    expect(steps[0]?.prompt).toContain("The council's verdicts have been arbitrated: proceed — ");
    expect(parallelMode.next(parallel(), [...allAssessed(), aStep('synthesis')])).toEqual({ kind: 'conclude' });
  });
});

describe('sequential refinement: the same assessments, one at a time', () => {
  const ctx = aModeContext({ plan: aPlan({ mode: 'sequential_refinement', personas: COUNCIL, rounds: 1 }) });

  it('asks one persona at a time in speaker order, each seeing the assessments before it', () => {
    const first = asked(sequentialRefinementMode, ctx, []);
    expect(first).toMatchObject({ concurrent: false, steps: [{ id: 'assessment:alpha' }] });
    expect(first.steps[0]?.prompt).not.toContain('Earlier assessments');
    const second = asked(sequentialRefinementMode, ctx, [assessed('alpha', assessmentJson('investigate', 0.6, 0.5))]);
    expect(second.steps.map((s) => s.id)).toEqual(['assessment:beta']);
    expect(second.steps[0]?.prompt).toContain(
      '--- Earlier assessments by the council (refine them; say where you differ) ---\n[alpha] investigate (confidence 0.60): investigate after assessing',
    );
  });
});

describe('parallel with anonymous review', () => {
  const ctx = parallel({ review: 'anonymous' });

  it('has each persona rank the others under labels, never seeing names or its own assessment', () => {
    const done = [
      assessed('alpha', assessmentJson('proceed', 0.9, 0.9)),
      assessed('beta', assessmentJson('investigate', 0.5, 0.4)),
      assessed('gamma', assessmentJson('escalate', 0.7, 0.2)),
    ];
    const { steps, concurrent } = asked(parallelMode, ctx, done);
    expect(concurrent).toBe(true);
    expect(steps.map((s) => [s.id, s.round])).toEqual(COUNCIL.map((p) => [`review:${p}`, 2]));
    const alpha = steps[0]?.prompt ?? '';
    expect(alpha).toContain('Assessment A:\ninvestigate (confidence 0.50)');
    expect(alpha).toContain('Assessment B:\nescalate (confidence 0.70)');
    expect(alpha).not.toContain('proceed (confidence 0.90)');
    expect(alpha).not.toMatch(/\[(beta|gamma)\]/);
  });

  it('skips the review with a council of one', () => {
    expect(asked(parallelMode, parallel({ review: 'anonymous' }, ['alpha']), allAssessed(['alpha'])).steps.map((s) => s.id)).toEqual([
      'synthesis',
    ]);
  });

  it('shows the standing in the artifact and uses it as weights', () => {
    const reviews = COUNCIL.map((p) =>
      aStep(`review:${p}`, { kind: 'review', persona: p, reply: JSON.stringify({ ranking: ['A', 'B'], rationale: 'first is best' }) }),
    );
    const conclusion = parallelMode.conclude(ctx, [...allAssessed(), ...reviews, aStep('synthesis')]);
    expect(conclusion.sections.map((s) => s.title)).toEqual([
      'Assessments',
      'Composition and arbitration',
      'Composed rationale',
      'Anonymous review',
      'Orchestration',
    ]);
    expect(conclusion.audit.review_standing).toEqual(['alpha', 'beta', 'gamma']);
  });
});

describe('parallel: the conclusion', () => {
  it('composes and arbitrates the assessments, the synthesis is the proposal', () => {
    const conclusion = parallelMode.conclude(parallel(), [...allAssessed(), aStep('synthesis', { reply: 'Go with Kafka.' })]);
    expect(conclusion.arbitration.final_action).toBe('proceed');
    expect(conclusion.proposal).toBe('Go with Kafka.');
    expect(conclusion.sections.map((s) => s.title)).toEqual([
      'Assessments',
      'Composition and arbitration',
      'Composed rationale',
      'Orchestration',
    ]);
    expect(conclusion.audit).toMatchObject({
      mode: 'parallel',
      composition: 'weighted_average',
      flagged_vectors: [],
      invalid_assessments: [],
      overall_confidence: expect.any(Number),
    });
    expect(conclusion.sections.at(-1)?.markdown).toContain('Assessments: 3 calls, 3.00 s of model time in 1.00 s of wall time.');
  });

  it('counts a persona that gave no readable assessment as escalate, and leaves it out of the scores', () => {
    const conclusion = parallelMode.conclude(parallel(), [assessed('alpha'), assessed('beta', 'I am not sure.')]);
    expect(conclusion.verdicts.map((v) => [v.persona, v.action, v.valid])).toEqual([
      ['alpha', 'proceed', true],
      ['beta', 'escalate', false],
      ['gamma', 'escalate', false],
    ]);
    expect(conclusion.audit.invalid_assessments).toEqual(['beta', 'gamma']);
    expect(conclusion.sections[1]?.markdown).toContain(
      'Missing or malformed assessments (counted as escalate, left out of the scores): `beta`, `gamma`.',
    );
    // The heat map: a column per persona, the composed scores first; the two without a readable assessment have no score.
    const heatmap = conclusion.attachments[0]?.content ?? '';
    expect(byClass(parseXml(heatmap), 'column').map((c) => c.text)).toEqual(['composed', ...COUNCIL]);
    const byColumn = (c: number) => heatmapCells(heatmap).filter((_, i) => i % 4 === c);
    expect(byColumn(1).every((cell) => cell.kind === 'cell')).toBe(true);
    for (const missing of [2, 3]) expect(byColumn(missing).every((cell) => cell.kind === 'cell missing')).toBe(true);
  });

  it('investigates instead of proceeding over vectors the personas disagree on', () => {
    const ctx = parallel({ composition: 'consensus_threshold', consensus_threshold: 0.2 });
    const done = [
      assessed('alpha', assessmentJson('proceed', 0.9, 0.8, { impact: 0.9 })),
      assessed('beta', assessmentJson('proceed', 0.9, 0.8, { impact: 0.1 })),
      assessed('gamma'),
    ];
    const conclusion = parallelMode.conclude(ctx, done);
    expect(conclusion.arbitration.final_action).toBe('investigate');
    expect(conclusion.arbitration.reasoning).toContain('1 vector(s) flagged by the consensus threshold, so the council investigates first');
    expect(conclusion.arbitration.conflicts).toContainEqual(
      expect.stringMatching(/^vector impact: the personas' scores spread 0\.8 \(std dev 0\.\d+; consensus threshold 0\.2\)$/),
    );
    expect(conclusion.audit.flagged_vectors).toEqual(['impact']);
  });

  it("tabulates each persona's assessment and the composed vectors in the artifact", () => {
    const done = [assessed('alpha', assessmentJson('proceed', 0.8, 0.6, { impact: 1 })), assessed('beta', 'no assessment')];
    const [table] = parallelMode.conclude(parallel({}, ['alpha', 'beta']), done).sections;
    expect(table?.markdown).toMatchInlineSnapshot(`
      "| Persona | Action | Confidence | Overall | Foundation | Comprehension | Execution | Rationale |
      |---|---|---|---|---|---|---|---|
      | \`alpha\` | proceed | 0.80 | 0.44 | 0.60 | 0.60 | 0.70 | proceed after assessing |
      | \`beta\` | escalate (fail-closed) | 1.00 | — | — | — | — | fail-closed: malformed assessment (no JSON object with the keys action, confidence, rationale, vectors was found) |

      | Vector | \`alpha\` | \`beta\` | **composed** | spread | std dev |
      |---|---|---|---|---|---|
      | engagement | 0.60 | — | **0.60** | 0.00 | 0.00 |
      | know | 0.60 | — | **0.60** | 0.00 | 0.00 |
      | do | 0.60 | — | **0.60** | 0.00 | 0.00 |
      | context | 0.60 | — | **0.60** | 0.00 | 0.00 |
      | clarity | 0.60 | — | **0.60** | 0.00 | 0.00 |
      | coherence | 0.60 | — | **0.60** | 0.00 | 0.00 |
      | signal | 0.60 | — | **0.60** | 0.00 | 0.00 |
      | density | 0.60 | — | **0.60** | 0.00 | 0.00 |
      | state | 0.60 | — | **0.60** | 0.00 | 0.00 |
      | change | 0.60 | — | **0.60** | 0.00 | 0.00 |
      | completion | 0.60 | — | **0.60** | 0.00 | 0.00 |
      | impact | 1.00 | — | **1.00** | 0.00 | 0.00 |
      | uncertainty | 0.60 | — | **0.60** | 0.00 | 0.00 |"
    `);
  });

  it('says so when no assessment finished', () => {
    expect(parallelMode.conclude(parallel(), []).sections.at(-1)?.markdown).toContain('Assessments: none finished.');
  });
});
