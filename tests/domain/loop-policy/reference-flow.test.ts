/**
 * The reference tests of `tests/test_stage3_loop_policy.py` (loop-policy.md §2.1) and the
 * [derived] plan-flow edge cases, end to end through the counter and maestro's state.
 */
import { describe, expect, it } from 'vitest';
import { makeLoopEvent } from '../../helpers/loop-event.js';
import { HitlCounter } from '../../../src/domain/loop-policy/hitl-counter.js';
import {
  enforceTerminalGuard,
  maestroAckPlanReceived,
  maestroDispatchPlanRequest,
  maestroMaybeStop,
  maestroResetSessionStateOnNewSession,
  mediationProposePlan,
} from '../../../src/domain/loop-policy/maestro-state.js';
import { SessionState } from '../../../src/domain/loop-policy/session-state.js';
import { createLoopPolicySpec } from '../../../src/domain/loop-policy/spec.js';

describe('reference tests', () => {
  it('2: two-stage firing, stop and terminal guard', () => {
    const counter = new HitlCounter({ spec: createLoopPolicySpec({ hitl_max_rounds: 4, plan_request_round: 3 }) });
    const state = new SessionState('S1');
    const results = ['E1', 'E2', 'E3', 'E4'].map((id) =>
      counter.maybeIncrementAndEmit(makeLoopEvent(id, { conflict_fingerprint: 'fp:X' })),
    );
    expect(results.map((r) => r.count)).toEqual([1, 2, 3, 4]);
    const plans = results.flatMap((r) => (r.planRequested ? [r.planRequested] : []));
    const ends = results.flatMap((r) => (r.endRecommended ? [r.endRecommended] : []));
    expect(plans.map((e) => [e.event_id, e.kind, e.decision])).toEqual([['E3::plan_requested', 'K_PLAN_REQUESTED', 'PAUSE_FOR_HITL']]);
    expect(ends.map((e) => [e.event_id, e.kind, e.decision])).toEqual([
      ['E4::end_recommended', 'K_END_RECOMMENDED', 'END_SESSION_RECOMMENDED'],
    ]);

    const stopped = maestroMaybeStop(state, ends[0]!);
    expect(stopped).toMatchObject({ kind: 'K_STOPPED', decision: 'STOPPED', sealed: true, overrideable: false });
    const guarded = enforceTerminalGuard(state, makeLoopEvent('E_after', { conflict_fingerprint: 'fp:X' }));
    expect(guarded).toMatchObject({ decision: 'STOPPED', kind: 'K_STOPPED', event_id: 'E_after::terminal_guard' });
  });

  it('3: the plan flow is idempotent and never counts', () => {
    const counter = new HitlCounter();
    const state = new SessionState('S1');
    const results = ['H1', 'H2', 'H3'].map((id) => counter.maybeIncrementAndEmit(makeLoopEvent(id, { conflict_fingerprint: 'fp:plan' })));
    expect(results.map((r) => r.count)).toEqual([1, 2, 3]);
    expect(results.map((r) => r.endRecommended)).toEqual([null, null, null]);
    const planReq = results[2]?.planRequested;
    expect(planReq?.kind).toBe('K_PLAN_REQUESTED');

    const d1 = maestroDispatchPlanRequest(state, planReq!);
    expect(d1?.kind).toBe('K_PLAN_REQ_DISPATCH');
    expect(maestroDispatchPlanRequest(state, planReq!)).toBeNull();
    const p1 = mediationProposePlan(state, d1!, 'p');
    expect(p1?.kind).toBe('K_PLAN_PROPOSED');
    expect(mediationProposePlan(state, d1!, 'p')).toBeNull();
    const a1 = maestroAckPlanReceived(state, p1!);
    expect(a1?.kind).toBe('K_PLAN_RECEIVED');
    expect(maestroAckPlanReceived(state, p1!)).toBeNull();

    for (const e of [planReq!, d1!, p1!, a1!]) {
      expect(counter.maybeIncrementAndEmit(e)).toEqual({ count: 3, planRequested: null, endRecommended: null });
    }
  });

  it('4: missing keys fail closed at dispatch', () => {
    const e = makeLoopEvent('', { session_id: '', conflict_fingerprint: '', kind: 'K_PLAN_REQUESTED' });
    expect(maestroDispatchPlanRequest(new SessionState('S1'), e)).toMatchObject({
      decision: 'PAUSE_FOR_HITL',
      reason_code: 'SPEC_MISSING_KEYS',
      sealed: false,
      overrideable: true,
    });
  });

  it('5: an invalid pairing fails closed at maybe_stop', () => {
    const e = makeLoopEvent('X', { conflict_fingerprint: 'fp:badpair', kind: 'K_END_RECOMMENDED', decision: 'PAUSE_FOR_HITL' });
    expect(maestroMaybeStop(new SessionState('S1'), e)).toMatchObject({
      decision: 'PAUSE_FOR_HITL',
      reason_code: 'SPEC_INVALID_INPUT',
      sealed: false,
      overrideable: true,
      kind: 'K_PLAN_RECEIVED',
    });
  });

  it('6: an explicit new session resets the counter and the state together', () => {
    const counter = new HitlCounter();
    const state = new SessionState('S1');
    for (const id of ['H1', 'H2', 'H3']) counter.maybeIncrementAndEmit(makeLoopEvent(id, { conflict_fingerprint: 'fp_old' }));
    state.planRequestDispatchedKeys.add('S1|fp_old');
    state.planProposedKeys.add('S1|fp_old');
    state.planReceivedKeys.add('S1|fp_old');
    state.isStopped = true;
    state.stopIssued = true;

    counter.resetIfAllowed('S1', 'fp_old', 'fp_new', 'explicit_new_session_start');
    maestroResetSessionStateOnNewSession(state);

    expect([state.isStopped, state.stopIssued]).toEqual([false, false]);
    expect([state.planRequestDispatchedKeys.size, state.planProposedKeys.size, state.planReceivedKeys.size]).toEqual([0, 0, 0]);
    expect(counter.countFor('S1', 'fp_old')).toBe(0);
  });
});

describe('[derived] plan-flow edge cases', () => {
  it('dispatch on K_HITL_PAUSE → null', () => {
    expect(maestroDispatchPlanRequest(new SessionState('S1'), makeLoopEvent('E1'))).toBeNull();
  });

  it('dispatch on "K_BOGUS" → SPEC_INVALID_INPUT', () => {
    expect(maestroDispatchPlanRequest(new SessionState('S1'), makeLoopEvent('E1', { kind: 'K_BOGUS' }))?.reason_code).toBe(
      'SPEC_INVALID_INPUT',
    );
  });

  it('propose on K_PLAN_REQ_DISPATCH with an empty event_id → SPEC_MISSING_KEYS at mediation, id "::fail_closed"', () => {
    const out = mediationProposePlan(new SessionState('S1'), makeLoopEvent('', { kind: 'K_PLAN_REQ_DISPATCH' }), 'p');
    expect(out).toMatchObject({ reason_code: 'SPEC_MISSING_KEYS', layer: 'mediation', event_id: '::fail_closed' });
  });

  it('ack on K_PLAN_PROPOSED + STOPPED → SPEC_INVALID_INPUT recording the original decision', () => {
    const out = maestroAckPlanReceived(new SessionState('S1'), makeLoopEvent('E1', { kind: 'K_PLAN_PROPOSED', decision: 'STOPPED' }));
    expect(out?.reason_code).toBe('SPEC_INVALID_INPUT');
    expect(out?.payload).toMatchObject({ original_decision: 'STOPPED' });
  });
});

describe('end-to-end flow', () => {
  it('pauses 1–2 nothing, 3 plan flow, 4 end + stop, then guard until a new session', () => {
    const counter = new HitlCounter();
    const state = new SessionState('S1');
    const log: string[] = [];
    const feed = (id: string) => {
      const pause = makeLoopEvent(id);
      const guarded = enforceTerminalGuard(state, pause);
      if (guarded) return void log.push(guarded.event_id);
      const { planRequested, endRecommended } = counter.maybeIncrementAndEmit(pause);
      if (planRequested) {
        log.push(planRequested.event_id);
        const d = maestroDispatchPlanRequest(state, planRequested);
        const p = d && mediationProposePlan(state, d, 'plan');
        const a = p && maestroAckPlanReceived(state, p);
        for (const e of [d, p, a]) if (e) log.push(e.event_id);
      }
      if (endRecommended) {
        log.push(endRecommended.event_id);
        const s = maestroMaybeStop(state, endRecommended);
        if (s) log.push(s.event_id);
      }
    };
    for (const id of ['P1', 'P2', 'P3', 'P4', 'P5']) feed(id);
    expect(log).toEqual([
      'P3::plan_requested',
      'P3::plan_requested::plan_req_dispatch',
      'P3::plan_requested::plan_req_dispatch::plan_proposed',
      'P3::plan_requested::plan_req_dispatch::plan_proposed::plan_received',
      'P4::end_recommended',
      'P4::end_recommended::stop',
      'P5::terminal_guard',
    ]);

    counter.resetIfAllowed('S1', 'fp1', 'fp1', 'explicit_new_session_start');
    maestroResetSessionStateOnNewSession(state);
    log.length = 0;
    feed('P1');
    expect(log).toEqual([]);
    expect(counter.countFor('S1', 'fp1')).toBe(1);
  });
});
