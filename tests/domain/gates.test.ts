import { describe, expect, it } from 'vitest';
import { checkDecisionInvariants, GATE_LAYERS } from '../../src/domain/decision.js';
import { evaluateGates, taskSensitivity, type GateFacts } from '../../src/domain/gates.js';
import type { FloorFinding, FloorGate } from '../../src/domain/floor/floor.js';
import type { FloorReading } from '../../src/domain/floor/reading.js';

const clean: GateFacts = {
  taskBlank: false,
  unknownPersonas: [],
  missingInputs: [],
  pathEscapes: [],
  piiCategories: [],
  secretCategories: [],
};
const facts = (overrides: Partial<GateFacts>): GateFacts => ({ ...clean, ...overrides });

const READING: FloorReading = {
  perception: { deliverables: ['review'], acts: [], unplaced: [], objects: [], inputs: [] },
  context: {
    domains: [],
    high_stakes_case: [],
    irreversible: false,
    scale: false,
    urgency: false,
    intent: 'clear',
    unclear: [],
    boundary: false,
  },
};
/** The floor as the gates see it: what it found (each finding at its gate), accepted or not. */
const floor = (...found: [FloorGate, string, string?][]): Pick<GateFacts, 'floor'> => {
  const findings: FloorFinding[] = found.map(([gate, label, accepted]) => ({
    gate,
    label,
    says: label,
    risk: label,
    ...(accepted ? { accepted } : {}),
  }));
  return {
    floor: {
      reading: READING,
      verdict: {
        proceeds: findings.every((f) => f.accepted),
        findings,
        acceptedBy: findings.flatMap((f) => (f.accepted ? [f.accepted] : [])),
      },
    },
  };
};

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
    ['unclear intent', floor(['meaning', 'unclear: unresolved_reference']), 'meaning', 'MEANING_AMBIGUOUS_INTENT', 'PAUSE_FOR_HITL', false],
    [
      'missing input',
      { missingInputs: [{ path: 'a.md', reason: 'not found' }] },
      'consistency',
      'CONSISTENCY_INPUT_MISSING',
      'PAUSE_FOR_HITL',
      false,
    ],
    ['boundary ask', floor(['rfl', 'boundary']), 'rfl', 'REL_BOUNDARY_UNSTABLE', 'PAUSE_FOR_HITL', false],
    ['secret', { secretCategories: ['API_KEY_OPENAI'] }, 'ethics', 'ETHICS_SECRET_DETECTED', 'STOPPED', true],
    ['PII (policy stop)', { piiCategories: ['EMAIL'] }, 'ethics', 'ETHICS_PII_DETECTED', 'STOPPED', true],
    ['PII (policy pause)', { piiCategories: ['EMAIL'], piiPolicy: 'pause' }, 'ethics', 'ETHICS_PII_DETECTED', 'PAUSE_FOR_HITL', false],
    [
      'an act in a high-stakes domain',
      floor(['ethics', 'act: dismiss_person (task)']),
      'ethics',
      'ETHICS_HIGH_STAKES',
      'PAUSE_FOR_HITL',
      false,
    ],
    [
      'path escape',
      { pathEscapes: [{ field: 'output_artifact_path', path: '../x', reason: 'escapes' }] },
      'acc',
      'ACC_PATH_ESCAPE',
      'STOPPED',
      true,
    ],
    ['stopped conflict', { conflictStopped: true }, 'acc', 'ACC_STOPPED_IS_TERMINAL', 'STOPPED', true],
    ['an act on a system', floor(['acc', 'act: publish (task)']), 'acc', 'ACC_EXTERNAL_SIDE_EFFECT_REQUIRES_HITL', 'PAUSE_FOR_HITL', false],
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

  it('stops a command on a stopped conflict line at once, whatever an earlier gate would pause on', () => {
    const pauses: [string, Partial<GateFacts>][] = [
      ['MEANING_AMBIGUOUS_INTENT', floor(['meaning', 'unclear: no_object'])],
      ['CONSISTENCY_INPUT_MISSING', { missingInputs: [{ path: 'a.md', reason: 'missing' }] }],
      ['REL_BOUNDARY_UNSTABLE', floor(['rfl', 'boundary'])],
      ['ETHICS_HIGH_STAKES', floor(['ethics', 'act: dismiss_person (task)'])],
      ['ACC_EXTERNAL_SIDE_EFFECT_REQUIRES_HITL', floor(['acc', 'act: publish (task)'])],
    ];
    for (const [reason, cause] of pauses) {
      expect(evaluateGates(facts(cause)).decision.reason_code).toBe(reason);
      const r = evaluateGates(facts({ ...cause, conflictStopped: true }));
      expect(r.decision).toMatchObject({ decision: 'STOPPED', reason_code: 'ACC_STOPPED_IS_TERMINAL', sealed: true, layer: 'acc' });
      // Still one record per gate, and every record keeps the invariants.
      expect(r.outcomes.map((o) => o.layer)).toEqual([...GATE_LAYERS]);
      for (const o of r.outcomes) expect(checkDecisionInvariants(o.decision)).toEqual([]);
    }
    // Another sealed stop of an earlier gate still comes first (it is as final).
    expect(evaluateGates(facts({ secretCategories: ['JWT'], conflictStopped: true })).decision.reason_code).toBe('ETHICS_SECRET_DETECTED');
  });

  it('lets a person clear a pause, but never a seal', () => {
    const cleared = evaluateGates(facts({ missingInputs: [{ path: 'a', reason: 'x' }], approved: new Set(['CONSISTENCY_INPUT_MISSING']) }));
    expect(cleared.decision.decision).toBe('RUN');
    expect(cleared.outcomes[2]?.details).toMatchObject({ approved_by_person: 'CONSISTENCY_INPUT_MISSING' });
    // …except a cause that makes deliberation impossible: it is checked again, and pauses again.
    const still = evaluateGates(facts({ unknownPersonas: ['ghost'], approved: new Set(['MEANING_UNKNOWN_PERSONA']) }));
    expect(still.decision).toMatchObject({ decision: 'PAUSE_FOR_HITL', reason_code: 'MEANING_UNKNOWN_PERSONA' });
    // An ambiguous task is the person's to read: once they continue, the council works on it as written.
    const read = evaluateGates(facts({ ...floor(['meaning', 'unclear: no_object']), approved: new Set(['MEANING_AMBIGUOUS_INTENT']) }));
    expect(read.decision.decision).toBe('RUN');
    expect(read.outcomes[1]?.details).toMatchObject({ approved_by_person: 'MEANING_AMBIGUOUS_INTENT' });
    const sealed = evaluateGates(facts({ piiCategories: ['EMAIL'], approved: new Set(['ETHICS_PII_DETECTED']) }));
    expect(sealed.decision).toMatchObject({ decision: 'STOPPED', sealed: true });
  });

  it('redacts instead of stopping when the workspace says so', () => {
    expect(evaluateGates(facts({ piiCategories: ['EMAIL'], piiPolicy: 'redact' })).decision.decision).toBe('RUN');
  });

  it('records what the floor found at the gate that pauses, and the whole reading at mediator_advice', () => {
    const r = evaluateGates(facts(floor(['meaning', 'unclear: vague_object'])));
    expect(r.outcomes[1]).toMatchObject({ layer: 'meaning', details: { floor: ['unclear: vague_object'] } });
    expect(r.outcomes[0]).toMatchObject({
      layer: 'mediator_advice',
      decision: { decision: 'RUN', reason_code: 'MEDIATOR_ADVICE_NOTED' },
      details: { deliverables: ['review'], proceeds: false, findings: ['unclear: vague_object'] },
    });
  });

  it('lets through what the workspace accepts, and records the acceptance', () => {
    const r = evaluateGates(facts(floor(['acc', 'act: change_system (task)', 'change_system'])));
    expect(r.decision.decision).toBe('RUN');
    expect(r.outcomes[0]?.details).toMatchObject({ proceeds: true, accepted_by: ['change_system'] });
    // An acceptance of one class leaves the others standing.
    const other = evaluateGates(facts(floor(['acc', 'act: change_system (task)', 'change_system'], ['ethics', 'case: health'])));
    expect(other.decision).toMatchObject({ layer: 'ethics', reason_code: 'ETHICS_HIGH_STAKES' });
  });

  it('notes advice without ever stopping', () => {
    const r = evaluateGates(facts({ ...floor(['acc', 'act: send (task)']), piiCategories: ['EMAIL'], piiPolicy: 'redact' }));
    expect(r.outcomes[0]).toMatchObject({ layer: 'mediator_advice', decision: { decision: 'RUN', reason_code: 'MEDIATOR_ADVICE_NOTED' } });
  });
});

describe('taskSensitivity: what the REROUTE table asks of a task', () => {
  const base = { taskBlank: false, unknownPersonas: [], missingInputs: [], pathEscapes: [], piiCategories: [], secretCategories: [] };
  it.each([
    ['personal data', { piiCategories: ['EMAIL'] }],
    ['a secret', { secretCategories: ['AWS_ACCESS_KEY'] }],
    ['a particular case in a high-stakes domain', floor(['ethics', 'case: health'])],
    ['an act in the world', floor(['acc', 'act: move_money (task)'])],
    ['an act the workspace accepts', floor(['acc', 'act: change_system (task)', 'change_system'])],
  ])('%s makes a task policy-sensitive (never rerouted)', (_what, facts) => {
    expect(taskSensitivity({ ...base, ...facts })).toEqual({ policySensitive: true, ambiguous: false });
  });
  it('a boundary ask or an unclear request is ambiguous intent', () => {
    expect(taskSensitivity({ ...base, ...floor(['rfl', 'boundary']) }).ambiguous).toBe(true);
    expect(taskSensitivity({ ...base, ...floor(['meaning', 'unclear: no_object']) }).ambiguous).toBe(true);
    expect(taskSensitivity(base)).toEqual({ policySensitive: false, ambiguous: false });
  });
});
