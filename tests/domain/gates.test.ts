import { describe, expect, it } from 'vitest';
import { checkDecisionInvariants, GATE_LAYERS } from '../../src/domain/decision.js';
import { evaluateGates, taskSensitivity, type GateFacts } from '../../src/domain/gates.js';
import { readPolicySignals } from '../../src/domain/policy-signals.js';

const clean: GateFacts = {
  taskBlank: false,
  unknownPersonas: [],
  missingInputs: [],
  pathEscapes: [],
  piiCategories: [],
  secretCategories: [],
};
const facts = (overrides: Partial<GateFacts>): GateFacts => ({ ...clean, ...overrides });

describe('gates', () => {
  it('runs every gate in order and dispatches a clean command', () => {
    const r = evaluateGates(clean);
    expect(r.outcomes.map((o) => o.layer)).toEqual([...GATE_LAYERS]);
    expect(r.outcomes.every((o) => o.decision.decision === 'RUN' && !o.skipped)).toBe(true);
    expect(r.decision).toMatchObject({ decision: 'RUN', reason_code: 'ORCH_RUN_OK', layer: 'dispatch' });
  });

  const table: [string, Partial<GateFacts>, string, string, 'PAUSE_FOR_HITL' | 'STOPPED', boolean][] = [
    ['blank task', { taskBlank: true }, 'meaning', 'MEANING_EMPTY_TASK', 'PAUSE_FOR_HITL', false],
    ['unknown persona', { unknownPersonas: ['ghost'] }, 'meaning', 'MEANING_UNKNOWN_PERSONA', 'PAUSE_FOR_HITL', false],
    ['ambiguous intent', { ambiguity: ['unresolved_reference'] }, 'meaning', 'MEANING_AMBIGUOUS_INTENT', 'PAUSE_FOR_HITL', false],
    [
      'missing input',
      { missingInputs: [{ path: 'a.md', reason: 'not found' }] },
      'consistency',
      'CONSISTENCY_INPUT_MISSING',
      'PAUSE_FOR_HITL',
      false,
    ],
    ['boundary ask', { boundary: true }, 'rfl', 'REL_BOUNDARY_UNSTABLE', 'PAUSE_FOR_HITL', false],
    ['secret', { secretCategories: ['API_KEY_OPENAI'] }, 'ethics', 'ETHICS_SECRET_DETECTED', 'STOPPED', true],
    ['PII (policy stop)', { piiCategories: ['EMAIL'] }, 'ethics', 'ETHICS_PII_DETECTED', 'STOPPED', true],
    ['PII (policy pause)', { piiCategories: ['EMAIL'], piiPolicy: 'pause' }, 'ethics', 'ETHICS_PII_DETECTED', 'PAUSE_FOR_HITL', false],
    ['high stakes', { highStakes: ['medical'] }, 'ethics', 'ETHICS_HIGH_STAKES', 'PAUSE_FOR_HITL', false],
    [
      'path escape',
      { pathEscapes: [{ field: 'output_artifact_path', path: '../x', reason: 'escapes' }] },
      'acc',
      'ACC_PATH_ESCAPE',
      'STOPPED',
      true,
    ],
    ['stopped conflict', { conflictStopped: true }, 'acc', 'ACC_STOPPED_IS_TERMINAL', 'STOPPED', true],
    ['side effect', { sideEffects: ['publish'] }, 'acc', 'ACC_EXTERNAL_SIDE_EFFECT_REQUIRES_HITL', 'PAUSE_FOR_HITL', false],
  ];

  it.each(table)('%s → %s %s', (_what, overrides, layer, reason, decision, sealed) => {
    const r = evaluateGates(facts(overrides));
    expect(r.decision).toMatchObject({ layer, reason_code: reason, decision, sealed });
    expect(r.outcomes).toHaveLength(GATE_LAYERS.length);
    const at = GATE_LAYERS.indexOf(layer as (typeof GATE_LAYERS)[number]);
    // Gates after the deciding one are recorded as skipped, carrying the decision, never sealed.
    for (const o of r.outcomes.slice(at + 1))
      expect(o).toMatchObject({ skipped: true, decision: { decision, reason_code: reason, sealed: false } });
    for (const o of r.outcomes) expect(checkDecisionInvariants(o.decision)).toEqual([]);
  });

  it('takes the first gate that objects', () => {
    expect(evaluateGates(facts({ taskBlank: true, secretCategories: ['JWT'] })).decision.reason_code).toBe('MEANING_EMPTY_TASK');
    expect(evaluateGates(facts({ secretCategories: ['JWT'], piiCategories: ['EMAIL'] })).decision.reason_code).toBe(
      'ETHICS_SECRET_DETECTED',
    );
  });

  it('lets a person clear a pause, but never a seal', () => {
    const cleared = evaluateGates(facts({ missingInputs: [{ path: 'a', reason: 'x' }], approved: new Set(['CONSISTENCY_INPUT_MISSING']) }));
    expect(cleared.decision.decision).toBe('RUN');
    expect(cleared.outcomes[2]?.details).toMatchObject({ approved_by_person: 'CONSISTENCY_INPUT_MISSING' });
    // …except a cause that makes deliberation impossible: it is checked again, and pauses again.
    const still = evaluateGates(facts({ unknownPersonas: ['ghost'], approved: new Set(['MEANING_UNKNOWN_PERSONA']) }));
    expect(still.decision).toMatchObject({ decision: 'PAUSE_FOR_HITL', reason_code: 'MEANING_UNKNOWN_PERSONA' });
    // An ambiguous task is the person's to read: once they continue, the council works on it as written.
    const read = evaluateGates(facts({ ambiguity: ['no_object'], approved: new Set(['MEANING_AMBIGUOUS_INTENT']) }));
    expect(read.decision.decision).toBe('RUN');
    expect(read.outcomes[1]?.details).toMatchObject({ approved_by_person: 'MEANING_AMBIGUOUS_INTENT' });
    const sealed = evaluateGates(facts({ piiCategories: ['EMAIL'], approved: new Set(['ETHICS_PII_DETECTED']) }));
    expect(sealed.decision).toMatchObject({ decision: 'STOPPED', sealed: true });
  });

  it('redacts instead of stopping when the workspace says so', () => {
    expect(evaluateGates(facts({ piiCategories: ['EMAIL'], piiPolicy: 'redact' })).decision.decision).toBe('RUN');
  });

  it('records why the intent cannot be read, and notes it as advice', () => {
    const r = evaluateGates(facts({ ambiguity: ['vague_object'] }));
    expect(r.outcomes[1]).toMatchObject({ layer: 'meaning', details: { ambiguity: ['vague_object'] } });
    expect(r.outcomes[0]?.details).toMatchObject({ advice: ['ambiguous_intent'] });
  });

  it('notes advice without ever stopping', () => {
    const r = evaluateGates(facts({ sideEffects: ['send'], piiCategories: ['EMAIL'], piiPolicy: 'redact' }));
    expect(r.outcomes[0]).toMatchObject({ layer: 'mediator_advice', decision: { decision: 'RUN', reason_code: 'MEDIATOR_ADVICE_NOTED' } });
  });
});

describe('policy signals', () => {
  it.each([
    ['Publish the release notes on the blog', { sideEffects: ['publish'] }],
    ['Send the invoice reminders to every customer', { sideEffects: ['send'] }],
    ['Upload the dataset to the shared drive', { sideEffects: ['upload'] }],
    ['Should I sue my landlord over the deposit?', { highStakes: ['legal'] }],
    ['Suggest a dosage for the new medication', { highStakes: ['medical'] }],
    ['Give me investment advice for my pension', { highStakes: ['financial'] }],
    ['Decide for me which job offer to take', { boundary: true }],
    ['Assess the migration plan and propose next steps', {}],
    ['Review the e-mail templates for tone', {}],
  ])('%s', (task, expected) => {
    expect(readPolicySignals(task)).toEqual({ sideEffects: [], highStakes: [], boundary: false, ...expected });
  });
});

describe('taskSensitivity: what the REROUTE table asks of a task', () => {
  const base = { taskBlank: false, unknownPersonas: [], missingInputs: [], pathEscapes: [], piiCategories: [], secretCategories: [] };
  it.each([
    ['personal data', { piiCategories: ['EMAIL'] }],
    ['a secret', { secretCategories: ['AWS_ACCESS_KEY'] }],
    ['a high-stakes domain', { highStakes: ['medical'] }],
    ['an external side effect', { sideEffects: ['payment'] }],
  ])('%s makes a task policy-sensitive (never rerouted)', (_what, facts) => {
    expect(taskSensitivity({ ...base, ...facts })).toEqual({ policySensitive: true, ambiguous: false });
  });
  it('a boundary ask or an underspecified request is ambiguous intent', () => {
    expect(taskSensitivity({ ...base, boundary: true }).ambiguous).toBe(true);
    expect(taskSensitivity({ ...base, ambiguity: ['no_object'] }).ambiguous).toBe(true);
    expect(taskSensitivity(base)).toEqual({ policySensitive: false, ambiguous: false });
  });
});
