import { describe, expect, it } from 'vitest';
import { makeLoopEvent } from '../../helpers/loop-event.js';
import {
  enforceTerminalGuard,
  maestroAckPlanReceived,
  maestroDispatchPlanRequest,
  maestroMaybeStop,
  mediationProposePlan,
} from '../../../src/domain/loop-policy/maestro-state.js';
import { SessionState, SessionStateSnapshot } from '../../../src/domain/loop-policy/session-state.js';

function restore(state: SessionState): SessionState {
  return SessionState.fromSnapshot(SessionStateSnapshot.parse(JSON.parse(JSON.stringify(state.toSnapshot()))));
}

describe('SessionState snapshots', () => {
  it('starts unstopped and empty', () => {
    expect(new SessionState('S1').toSnapshot()).toEqual({
      schemaVersion: 1,
      session_id: 'S1',
      is_stopped: false,
      stop_issued: false,
      plan_request_dispatched_keys: [],
      plan_proposed_keys: [],
      plan_received_keys: [],
      stopped_keys: [],
    });
  });

  it('round-trips mid-flow: the restored state keeps every one-shot and the stop', () => {
    const state = new SessionState('S1');
    const req = makeLoopEvent('E3::plan_requested', { kind: 'K_PLAN_REQUESTED', conflict_fingerprint: 'fpB' });
    const d = maestroDispatchPlanRequest(state, req)!;
    maestroDispatchPlanRequest(state, { ...req, conflict_fingerprint: 'fpA' });
    const p = mediationProposePlan(state, d, 'plan')!;

    const mid = restore(state);
    expect(mid.toSnapshot()).toEqual(state.toSnapshot());
    expect(mid.toSnapshot().plan_request_dispatched_keys).toEqual(['S1|fpA', 'S1|fpB']);
    expect(maestroDispatchPlanRequest(mid, req)).toBeNull();
    expect(mediationProposePlan(mid, d, 'plan')).toBeNull();
    expect(maestroAckPlanReceived(mid, p)?.kind).toBe('K_PLAN_RECEIVED');

    const end = makeLoopEvent('E4::end_recommended', { kind: 'K_END_RECOMMENDED', decision: 'END_SESSION_RECOMMENDED' });
    maestroMaybeStop(mid, end);
    const after = restore(mid);
    expect(after.toSnapshot()).toMatchObject({ is_stopped: true, stop_issued: true, stopped_keys: ['S1|fp1'] });
    expect(maestroMaybeStop(after, end)).toBeNull();
    expect(enforceTerminalGuard(after, makeLoopEvent('Z'))?.sealed).toBe(true);
    expect(enforceTerminalGuard(after, makeLoopEvent('Z', { conflict_fingerprint: 'fpA' }), { scope: 'conflict' })).toBeNull();
  });

  it('serializes identically whatever the insertion order', () => {
    const keys = ['S1|fp2', 'S1|fp10', 'S1|fp1'];
    const a = new SessionState('S1');
    const b = new SessionState('S1');
    for (const k of keys) a.planProposedKeys.add(k);
    for (const k of [...keys].reverse()) b.planProposedKeys.add(k);
    expect(JSON.stringify(a.toSnapshot())).toBe(JSON.stringify(b.toSnapshot()));
    expect(a.toSnapshot().plan_proposed_keys).toEqual(['S1|fp1', 'S1|fp10', 'S1|fp2']);
  });

  const good = new SessionState('S1').toSnapshot();

  it.each([
    { name: 'another schema version', bad: { ...good, schemaVersion: 2 } },
    { name: 'a repeated key', bad: { ...good, plan_received_keys: ['S1|fp1', 'S1|fp1'] } },
    { name: 'an empty key', bad: { ...good, stopped_keys: [''] } },
    { name: 'a non-boolean flag', bad: { ...good, is_stopped: 'yes' } },
    { name: 'an unknown key', bad: { ...good, extra: 1 } },
    { name: 'a missing set', bad: { ...good, stopped_keys: undefined } },
  ])('rejects $name', ({ bad }) => {
    expect(SessionStateSnapshot.safeParse(bad).success).toBe(false);
  });
});
