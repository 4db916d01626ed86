import { describe, expect, it } from 'vitest';
import type { ModeContext, StepSpec } from '../../../src/domain/modes/mode.js';
import { roundRobinMode } from '../../../src/domain/modes/round-robin.js';
import type { Step } from '../../../src/domain/run-state.js';
import { aKnowledgeResult, aModeContext, aPlan, aStep, verdictJson } from '../../fixtures/domain-builders.js';

const ctx = aModeContext({ plan: aPlan({ personas: ['alpha', 'beta'], rounds: 2, synthesizer: 'alpha' }) });

/** The one step the mode asks for next, or the test fails. */
function nextStep(c: ModeContext, done: readonly Step[]): StepSpec {
  const next = roundRobinMode.next(c, done);
  if (next.kind !== 'steps') throw new Error(`expected a step, got ${next.kind}`);
  expect(next.concurrent).toBe(false);
  expect(next.steps).toHaveLength(1);
  return next.steps[0] as StepSpec;
}
/** Runs the mode to its end, each call answered by `reply`; `asked` collects what the mode asked for. */
function runThrough(c: ModeContext, reply: (spec: StepSpec) => string, asked: StepSpec[] = []): Step[] {
  const done: Step[] = [];
  for (let i = 0; i < 50 && roundRobinMode.next(c, done).kind === 'steps'; i++) {
    const spec = nextStep(c, done);
    asked.push(spec);
    done.push(aStep(spec.id, { kind: spec.kind, persona: spec.persona, round: spec.round, prompt: spec.prompt, reply: reply(spec) }));
  }
  return done;
}
const answer = (spec: StepSpec): string => (spec.kind === 'verdict' ? verdictJson('proceed', 0.8) : `${spec.persona} on ${spec.id}`);

describe('round robin: who speaks when', () => {
  it('goes round by round in speaker order, then every verdict, then the synthesis, then concludes', () => {
    const done = runThrough(ctx, answer);
    expect(done.map((s) => s.id)).toEqual([
      'turn:r1:alpha',
      'turn:r1:beta',
      'turn:r2:alpha',
      'turn:r2:beta',
      'verdict:alpha',
      'verdict:beta',
      'synthesis',
    ]);
    expect(roundRobinMode.next(ctx, done)).toEqual({ kind: 'conclude' });
  });

  it('never asks again for a step already done (a resumed run goes on where it stopped)', () => {
    const done = [aStep('turn:r1:alpha'), aStep('turn:r1:beta'), aStep('turn:r2:alpha')];
    expect(nextStep(ctx, done).id).toBe('turn:r2:beta');
    expect(nextStep(ctx, [aStep('turn:r1:beta')]).id).toBe('turn:r1:alpha');
  });

  it('lets turns fulfil knowledge requests, and nothing else', () => {
    const asked: StepSpec[] = [];
    runThrough(ctx, answer, asked);
    expect(asked.map((k) => [k.kind, k.knowledge])).toEqual([
      ['turn', true],
      ['turn', true],
      ['turn', true],
      ['turn', true],
      ['verdict', false],
      ['verdict', false],
      ['synthesis', false],
    ]);
  });
});

describe('round robin: what each speaker is told', () => {
  it('briefs a persona the first time it speaks, and only then', () => {
    const first = nextStep(ctx, []);
    expect(first.prompt.startsWith(ctx.briefing)).toBe(true);
    expect(first.prompt.endsWith('Round 1 of 2: give your analysis or next step.')).toBe(true);
    const again = nextStep(ctx, [aStep('turn:r1:alpha'), aStep('turn:r1:beta', { reply: 'beta says wait' })]);
    expect(again.prompt).not.toContain(ctx.briefing);
    expect(again.prompt).toBe(
      '--- Since you last spoke ---\n[beta, round 1]\nbeta says wait\n\nRound 2 of 2 (the last round): give your final analysis.',
    );
  });

  it('shows what was said and provided since the persona last spoke', () => {
    const done = [aStep('turn:r1:alpha', { reply: 'alpha asks for the plan', knowledge: [aKnowledgeResult()] })];
    const beta = nextStep(ctx, done);
    expect(beta.prompt).toContain('[alpha, round 1]\nalpha asks for the plan');
    expect(beta.prompt).toContain(
      'CONTEXT_PROVIDED (requested by alpha): READ_FILE(docs/plan.md) — 12 bytes\n<<<BEGIN docs/plan.md\nthe plan text',
    );
  });

  it('sends each persona its own earlier turns as its conversation', () => {
    const done = [aStep('turn:r1:alpha', { prompt: 'first prompt', reply: 'first reply' }), aStep('turn:r1:beta')];
    const spec = nextStep(ctx, done);
    expect(spec.messages.map((m) => m.content).slice(1)).toEqual(['first prompt', 'first reply', spec.prompt]);
  });

  it('asks verdicts as strict JSON, checked, and gives the synthesizer the arbitration', () => {
    const turns = ['turn:r1:alpha', 'turn:r1:beta', 'turn:r2:alpha', 'turn:r2:beta'].map((id) => aStep(id));
    const verdict = nextStep(ctx, turns);
    expect(verdict).toMatchObject({ id: 'verdict:alpha', kind: 'verdict', responseFormat: { name: 'verdict' } });
    expect(verdict.check?.('not json')).toMatchObject({ ok: false });
    const verdicts = [
      aStep('verdict:alpha', { reply: verdictJson('investigate', 0.9) }),
      aStep('verdict:beta', { reply: verdictJson('investigate', 0.7) }),
    ];
    const synthesis = nextStep(ctx, [...turns, ...verdicts]);
    expect(synthesis).toMatchObject({ id: 'synthesis', persona: 'alpha', kind: 'synthesis' });
    expect(synthesis.prompt).toContain("The council's verdicts have been arbitrated: investigate — ");
  });
});

describe('round robin: the conclusion', () => {
  it('arbitrates the verdicts and takes the synthesis as the proposal', () => {
    const done = runThrough(ctx, (spec) =>
      spec.kind === 'verdict' ? verdictJson(spec.persona === 'alpha' ? 'proceed' : 'escalate', 0.9) : 'The proposal.',
    );
    const conclusion = roundRobinMode.conclude(ctx, done);
    expect(conclusion.verdicts.map((v) => v.action)).toEqual(['proceed', 'escalate']);
    expect(conclusion.arbitration.final_action).toBe('escalate');
    expect(conclusion.proposal).toBe('The proposal.');
    expect(conclusion).toMatchObject({ sections: [], attachments: [] });
  });

  it('counts an unreadable verdict as escalate (fail closed)', () => {
    const done = runThrough(ctx, (spec) =>
      spec.kind === 'verdict' ? (spec.persona === 'alpha' ? verdictJson('proceed', 1) : 'Looks good!') : 'text',
    );
    const conclusion = roundRobinMode.conclude(ctx, done);
    expect(conclusion.verdicts[1]).toMatchObject({ persona: 'beta', valid: false, action: 'escalate' });
    expect(conclusion.arbitration.final_action).toBe('escalate');
  });

  it('has no proposal when the synthesis never ran', () => {
    expect(roundRobinMode.conclude(ctx, []).proposal).toBe('');
  });
});
