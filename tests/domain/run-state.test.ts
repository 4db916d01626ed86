import { describe, expect, it } from 'vitest';
import { approvedReasons, roundRobinStepId, RunState, Step, wasRehearsal } from '../../src/domain/run-state.js';
import { aPlan, aRunState, aStep } from '../fixtures/domain-builders.js';

const identity = (rehearsal: boolean) => ({
  provider: rehearsal ? 'offline' : 'openai',
  model: rehearsal ? 'offline-rehearsal-v1' : 'gpt-4o',
  rehearsal,
});

describe('roundRobinStepId: the id a round-robin step has always had', () => {
  it.each([
    ['turn', 'auditor', 2, 'turn:r2:auditor'],
    ['verdict', 'auditor', 3, 'verdict:auditor'],
    ['synthesis', 'coordinator', 3, 'synthesis'],
  ])('%s by %s in round %i → %s', (kind, persona, round, id) => {
    expect(roundRobinStepId(kind, persona, round)).toBe(id);
  });

  it('gives each turn of a round its own id, and a verdict one id whatever the round', () => {
    expect(roundRobinStepId('turn', 'a', 1)).not.toBe(roundRobinStepId('turn', 'a', 2));
    expect(roundRobinStepId('turn', 'a', 1)).not.toBe(roundRobinStepId('turn', 'b', 1));
    expect(roundRobinStepId('verdict', 'a', 1)).toBe(roundRobinStepId('verdict', 'a', 4));
  });
});

describe('wasRehearsal: whether the replies came from the offline rehearsal, from what was recorded', () => {
  it("reads the steps' model identities first: all rehearsal, or not", () => {
    const steps = [aStep('turn:r1:alpha', { identity: identity(true) }), aStep('turn:r1:beta', { identity: identity(true) })];
    expect(wasRehearsal({ plan: aPlan({ rehearsal: false }), steps })).toBe(true);
    expect(
      wasRehearsal({ plan: aPlan({ rehearsal: true }), steps: [...steps, aStep('verdict:alpha', { identity: identity(false) })] }),
    ).toBe(false);
  });

  it("before any identified step, trusts the plan's routes", () => {
    expect(wasRehearsal({ plan: aPlan({ rehearsal: true }), steps: [] })).toBe(true);
    expect(wasRehearsal({ plan: aPlan({ rehearsal: false }), steps: [aStep('turn:r1:alpha')] })).toBe(false);
  });

  it('for a version 1 checkpoint (no identities, no flag), reads the providers of the route labels, never a name', () => {
    expect(wasRehearsal({ plan: aPlan({ model: 'offline (offline: offline-rehearsal-v1)' }), steps: [aStep('turn:r1:alpha')] })).toBe(true);
    expect(wasRehearsal({ plan: aPlan({ model: 'offline (offline: offline-rehearsal-v1), main (openai: gpt-4o)' }), steps: [] })).toBe(
      false,
    );
    expect(wasRehearsal({ plan: aPlan({ model: 'offline-backup (openai: gpt-real)' }), steps: [] })).toBe(false);
  });

  it('does not know before anything is recorded', () => {
    expect(wasRehearsal({ steps: [] })).toBeUndefined();
  });
});

describe('approvedReasons: the pauses a person already chose to continue past', () => {
  const decided = (reason_code: string, decision: 'continue' | 'stop') => ({
    pause_id: `p-${reason_code}`,
    layer: 'hitl',
    reason_code,
    decision,
    decided_at: '2026-01-01T00:00:00.000Z',
  });

  it('holds the reasons of the pauses continued, once each, and none that were stopped', () => {
    const reasons = approvedReasons({
      hitl: [
        decided('ARBITRATION_INVESTIGATE', 'continue'),
        decided('BUDGET_EXCEEDED', 'stop'),
        decided('ARBITRATION_INVESTIGATE', 'continue'),
        decided('ETHICS_PII_DETECTED', 'continue'),
      ],
    });
    expect([...reasons].sort()).toEqual(['ARBITRATION_INVESTIGATE', 'ETHICS_PII_DETECTED']);
  });

  it('is empty for a run nobody decided on', () => {
    expect(approvedReasons({ hitl: [] }).size).toBe(0);
  });
});

describe('the checkpoint schema', () => {
  it('accepts a fresh run and fills in what older writers left out', () => {
    const { steps: _s, trail: _t, hitl: _h, reroutes: _r, ...bare } = aRunState();
    const parsed = RunState.parse(bare);
    expect(parsed).toMatchObject({ steps: [], trail: [], hitl: [], reroutes: [] });
  });

  it('gives a step one call and no knowledge unless it says otherwise', () => {
    const { calls: _c, knowledge: _k, ...bare } = aStep('turn:r1:alpha');
    expect(Step.parse(bare)).toMatchObject({ calls: 1, knowledge: [] });
  });

  it.each([
    ['an unknown status', { status: 'done' }],
    ['an unknown key (a typo or a newer writer)', { finshed_at: 'x' }],
    ['a step without an id', { steps: [{ ...aStep('turn:r1:alpha'), id: '' }] }],
    ['a step that took no call', { steps: [aStep('turn:r1:alpha', { calls: 0 })] }],
    ['a plan with no persona', { plan: aPlan({ personas: [] }) }],
  ])('refuses %s', (_what, change) => {
    expect(RunState.safeParse({ ...aRunState(), ...change }).success).toBe(false);
  });
});
