import { describe, expect, it } from 'vitest';
import {
  checkDecisionInvariants,
  DecisionRecord,
  GATE_LAYERS,
  pauseDecision,
  runDecision,
  sealedStopDecision,
  systemStopDecision,
  userDecision,
  type DecisionRecord as Record_,
} from '../../src/domain/decision.js';

const sound: Record_ = {
  decision: 'RUN',
  reason_code: 'SPEC_OK',
  sealed: false,
  overrideable: false,
  final_decider: 'SYSTEM',
  layer: 'meaning',
};

describe('the decision builders', () => {
  it('build records that keep every invariant and fit the schema', () => {
    const built = [
      runDecision('dispatch', 'RUN_COMPLETED'),
      pauseDecision('arbitration', 'ARBITRATION_INVESTIGATE'),
      sealedStopDecision('ethics', 'ETHICS_SECRET_DETECTED'),
      sealedStopDecision('acc', 'ACC_LOOP_BUDGET_EXCEEDED'),
      userDecision('RUN', 'HITL_CONTINUE'),
      userDecision('STOPPED', 'HITL_STOP'),
      systemStopDecision('queue', 'RUN_FAILED_INTERNAL'),
    ];
    for (const d of built) {
      expect(
        checkDecisionInvariants({ ...d, ...(d.final_decider === 'USER' ? { event: 'HITL_DECIDED' } : {}) }),
        JSON.stringify(d),
      ).toEqual([]);
      expect(DecisionRecord.safeParse(d).success).toBe(true);
    }
  });

  it('a pause is for a person: never sealed, always overrideable, decided by the system', () => {
    expect(pauseDecision('deliberation', 'BUDGET_EXCEEDED')).toMatchObject({
      decision: 'PAUSE_FOR_HITL',
      sealed: false,
      overrideable: true,
      final_decider: 'SYSTEM',
    });
  });

  it('a person decides on the hitl layer, and nothing a person decides is sealed', () => {
    expect(userDecision('STOPPED', 'HITL_STOP')).toEqual({
      decision: 'STOPPED',
      reason_code: 'HITL_STOP',
      sealed: false,
      overrideable: false,
      final_decider: 'USER',
      layer: 'hitl',
    });
  });

  it('a system stop is not sealed; a sealed stop cannot be overridden', () => {
    expect(systemStopDecision('model', 'MODEL_CALL_FAILED')).toMatchObject({ decision: 'STOPPED', sealed: false });
    expect(sealedStopDecision('ethics', 'ETHICS_SECRET_DETECTED')).toMatchObject({
      decision: 'STOPPED',
      sealed: true,
      overrideable: false,
      final_decider: 'SYSTEM',
    });
  });

  it('lists the gates in the order every command passes them', () => {
    expect(GATE_LAYERS).toEqual(['mediator_advice', 'meaning', 'consistency', 'rfl', 'ethics', 'acc', 'dispatch']);
  });
});

describe('checkDecisionInvariants: which invariant a record breaks', () => {
  it.each([
    ['an unknown decision', { decision: 'MAYBE' }, ['I1']],
    ['sealed outside ethics and acc', { decision: 'STOPPED', sealed: true, layer: 'arbitration' }, ['I2']],
    ['a sealed RUN on ethics', { sealed: true, layer: 'ethics' }, ['I3']],
    ['a sealed stop a person could override', { decision: 'STOPPED', sealed: true, overrideable: true, layer: 'acc' }, ['I3']],
    ['a sealed stop decided by a person', { decision: 'STOPPED', sealed: true, final_decider: 'USER', layer: 'acc' }, ['I3']],
    ['a pause a person cannot override', { decision: 'PAUSE_FOR_HITL', overrideable: false }, ['I4']],
    ['a sealed pause on rfl', { decision: 'PAUSE_FOR_HITL', sealed: true, overrideable: true, layer: 'rfl' }, ['I2', 'I3', 'I4', 'I5']],
    ["a person's decision recorded as the system's", { event: 'HITL_DECIDED', layer: 'hitl' }, ['I7']],
    ["a person's decision left overrideable", { event: 'HITL_DECIDED', final_decider: 'USER', overrideable: true, layer: 'hitl' }, ['I7']],
  ] as const)('%s → %j', (_what, change, broken) => {
    const found = checkDecisionInvariants({ ...sound, ...change } as Record_ & { event?: string });
    expect(found.map((m) => m.split(':')[0])).toEqual(broken);
  });

  it('finds nothing wrong with a sound record, and says what is wrong in words', () => {
    expect(checkDecisionInvariants(sound)).toEqual([]);
    expect(checkDecisionInvariants({ ...sound, sealed: true, layer: 'rfl', decision: 'STOPPED' })).toContain(
      'I5: the rfl layer never seals',
    );
  });
});

describe('DecisionRecord: a decision as a record carries it', () => {
  it.each([
    ['a reason code not in UPPER_SNAKE', { reason_code: 'spec ok' }],
    ['an unknown layer', { layer: 'firewall' }],
    ['an unknown decider', { final_decider: 'MODEL' }],
    ['an extra key', { note: 'why' }],
  ])('refuses %s', (_what, change) => {
    expect(DecisionRecord.safeParse({ ...sound, ...change }).success).toBe(false);
  });
});
