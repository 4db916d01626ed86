import { describe, expect, it } from 'vitest';
import { uniteAdvice } from '../../src/app/run-records.js';
import { evaluateGates, type GateFacts } from '../../src/domain/gates.js';
import { mediatorAdviceMessages, type MediatorAdvice } from '../../src/domain/mediator-advice.js';

const clean: GateFacts = {
  taskBlank: false,
  unknownPersonas: [],
  missingInputs: [],
  pathEscapes: [],
  piiCategories: [],
  secretCategories: [],
  sideEffects: [],
  highStakes: [],
  boundary: false,
  ambiguity: [],
};
const advice = (overrides: Partial<MediatorAdvice>): MediatorAdvice => ({
  side_effects: [],
  high_stakes: [],
  ambiguous: false,
  ...overrides,
});

// Issue 22 point 6: on a real route the model's classification joins the rules; its `ambiguous`
// reaches the same pause as the rules' ambiguity, and never turns a preference ask into another reason.
describe("the mediator's classification united with the rules", () => {
  it('an unclear task by the model pauses as ambiguous intent, labelled mediator', () => {
    const facts = uniteAdvice(clean, advice({ ambiguous: true }));
    expect(facts.ambiguity).toEqual(['mediator']);
    expect(evaluateGates(facts).decision).toMatchObject({
      layer: 'meaning',
      reason_code: 'MEANING_AMBIGUOUS_INTENT',
      decision: 'PAUSE_FOR_HITL',
    });
  });

  it('a preference ask the rules read stays the boundary pause, even once a person continued past it', () => {
    const facts = uniteAdvice({ ...clean, boundary: true, approved: new Set(['REL_BOUNDARY_UNSTABLE']) }, advice({ ambiguous: true }));
    expect(facts.ambiguity).toEqual([]);
    expect(evaluateGates(facts).decision.decision).toBe('RUN');
    expect(evaluateGates({ ...facts, approved: new Set() }).decision.reason_code).toBe('REL_BOUNDARY_UNSTABLE');
  });

  it('can add a reason, never remove one', () => {
    const facts = uniteAdvice({ ...clean, ambiguity: ['no_object'], sideEffects: ['payment'] }, advice({ high_stakes: ['financial'] }));
    expect(facts).toMatchObject({ ambiguity: ['no_object'], sideEffects: ['payment'], highStakes: ['financial'] });
  });

  it('tells the model when the task comes with inputs its words may point at (their content is not sent)', () => {
    expect(mediatorAdviceMessages('Review the attached file', 2).at(-1)?.content).toContain('comes with 2 attached input(s)');
    expect(mediatorAdviceMessages('Review the attached file').at(-1)?.content).not.toContain('attached input');
  });
});
