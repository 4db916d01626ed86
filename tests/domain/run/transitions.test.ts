import { describe, expect, it } from 'vitest';
import { applyRunEvent } from '../../../src/domain/run-machine.js';
import { RunStatus, type RunState } from '../../../src/domain/run-state.js';
import { pauseDecision, sealedStopDecision, systemStopDecision, userDecision } from '../../../src/domain/decision.js';
import { allows, canDecide, canResume, isLiveRun, RUN_EVENT_TYPES, TRANSITIONS } from '../../../src/domain/run/transitions.js';

/** What can happen to a run in state X: the whole life cycle, as a data test with no disk. */
describe('the run life cycle', () => {
  it('has a row for every status, naming only known events', () => {
    expect(Object.keys(TRANSITIONS).sort()).toEqual([...RunStatus.options].sort());
    for (const events of Object.values(TRANSITIONS)) for (const e of events) expect(RUN_EVENT_TYPES).toContain(e);
  });

  it.each(['completed', 'stopped', 'guardrail_stopped', 'invalid'] as const)('an ended run (%s) takes no event at all', (status) => {
    for (const event of RUN_EVENT_TYPES) expect(allows(status, event)).toBe(false);
    expect(canDecide(status) || canResume({ status }) || isLiveRun({ status })).toBe(false);
  });

  it('a paused run takes a decision, the ending a stop fixes, or a storage failure; never a model step', () => {
    expect(TRANSITIONS.paused).toEqual(['person_decided', 'finishing', 'finished', 'failed']);
    expect(canDecide('paused')).toBe(true);
    expect(canResume({ status: 'paused' })).toBe(false);
  });

  it('only a storage failure is revived', () => {
    for (const status of RunStatus.options) expect(allows(status, 'revived')).toBe(status === 'error');
    expect(canResume({ status: 'error', decision: systemStopDecision('queue', 'STORAGE_WRITE_FAILED') })).toBe(true);
    expect(canResume({ status: 'error', decision: systemStopDecision('queue', 'RUN_FAILED_INTERNAL') })).toBe(false);
  });

  it('applyRunEvent refuses what the table refuses', () => {
    const ended = { run_id: 'r1', status: 'completed', steps: [], trail: [], hitl: [], reroutes: [] } as unknown as RunState;
    expect(() => applyRunEvent(ended, { type: 'revived' }, '2026-01-01T00:00:00Z')).toThrow(
      'a completed run cannot take a "revived" event',
    );
  });
});

describe('isLiveRun: the one definition of a run that may still go on', () => {
  it.each([
    ['running', undefined, true],
    ['paused', pauseDecision('ethics', 'ETHICS_PII_DETECTED'), true],
    ['error', systemStopDecision('queue', 'STORAGE_WRITE_FAILED'), true],
    ['error', systemStopDecision('queue', 'RUN_FAILED_INTERNAL'), false],
    ['completed', undefined, false],
    ['stopped', sealedStopDecision('ethics', 'ETHICS_SECRET_DETECTED'), false],
    ['stopped', userDecision('STOPPED', 'HITL_STOP'), false],
    ['guardrail_stopped', undefined, false],
    ['invalid', undefined, false],
  ] as const)('%s (%o): %s', (status, decision, live) => {
    expect(isLiveRun({ status, ...(decision ? { decision } : {}) })).toBe(live);
  });
});
