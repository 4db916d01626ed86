import { describe, expect, it } from 'vitest';
import { LoopEvent, type LoopEventInput } from '../../../src/domain/loop-policy/events.js';
import { makeLoopEvent } from '../../helpers/loop-event.js';
import {
  enforceTerminalGuard,
  maestroAckPlanReceived,
  maestroDispatchPlanRequest,
  maestroMaybeStop,
  maestroResetSessionStateOnNewSession,
  mediationProposePlan,
} from '../../../src/domain/loop-policy/maestro-state.js';
import { SessionState } from '../../../src/domain/loop-policy/session-state.js';

type Step = (state: SessionState, e: LoopEventInput) => LoopEvent | null;

const dispatch: Step = maestroDispatchPlanRequest;
const propose: Step = (s, e) => mediationProposePlan(s, e, 'p');
const ack: Step = maestroAckPlanReceived;
const stop: Step = (s, e) => maestroMaybeStop(s, e);
const guard: Step = (s, e) => enforceTerminalGuard(s, e);

/** An output reduced to what the decision table states. */
function brief(out: LoopEvent | null) {
  if (out === null) return null;
  return {
    id: out.event_id,
    layer: out.layer,
    decision: out.decision,
    kind: out.kind,
    reason: out.reason_code,
    sealed: out.sealed,
    overrideable: out.overrideable,
  };
}

const unsealed = { sealed: false, overrideable: true };
const failClosed = (id: string, layer: string, reason: string) => ({
  id: `${id}::fail_closed`,
  layer,
  decision: 'PAUSE_FOR_HITL',
  kind: 'K_PLAN_RECEIVED',
  reason,
  ...unsealed,
});

const ev = (kind: string, decision: string, over: Partial<Omit<LoopEventInput, 'event_id'>> = {}, id = 'X') =>
  makeLoopEvent(id, { kind, decision, ...over });

describe('decision tables (rows top to bottom)', () => {
  it.each([
    // C1: keys before kind, then pairing, then kind, then once per conflict key.
    {
      fn: 'dispatch',
      step: dispatch,
      e: ev('K_HITL_PAUSE', 'PAUSE_FOR_HITL', {}, ''),
      out: failClosed('', 'maestro', 'SPEC_MISSING_KEYS'),
    },
    {
      fn: 'dispatch',
      step: dispatch,
      e: ev('K_BOGUS', 'PAUSE_FOR_HITL', { session_id: '' }),
      out: failClosed('X', 'maestro', 'SPEC_MISSING_KEYS'),
    },
    { fn: 'dispatch', step: dispatch, e: ev('K_BOGUS', 'PAUSE_FOR_HITL'), out: failClosed('X', 'maestro', 'SPEC_INVALID_INPUT') },
    { fn: 'dispatch', step: dispatch, e: ev('K_PLAN_REQUESTED', 'STOPPED'), out: failClosed('X', 'maestro', 'SPEC_INVALID_INPUT') },
    { fn: 'dispatch', step: dispatch, e: ev('K_HITL_PAUSE', 'PAUSE_FOR_HITL'), out: null },
    { fn: 'dispatch', step: dispatch, e: ev('K_PLAN_REQ_DISPATCH', 'PAUSE_FOR_HITL'), out: null },
    {
      fn: 'dispatch',
      step: dispatch,
      e: ev('K_PLAN_REQUESTED', 'PAUSE_FOR_HITL'),
      out: {
        id: 'X::plan_req_dispatch',
        layer: 'maestro',
        decision: 'PAUSE_FOR_HITL',
        kind: 'K_PLAN_REQ_DISPATCH',
        reason: 'MAESTRO_PLAN_REQUEST_DISPATCHED',
        ...unsealed,
      },
    },
    // C2: kind first (even without keys), then keys, then pairing.
    { fn: 'propose', step: propose, e: ev('K_PLAN_REQUESTED', 'PAUSE_FOR_HITL', {}, ''), out: null },
    { fn: 'propose', step: propose, e: ev('K_BOGUS', 'STOPPED'), out: null },
    {
      fn: 'propose',
      step: propose,
      e: ev('K_PLAN_REQ_DISPATCH', 'PAUSE_FOR_HITL', {}, ''),
      out: failClosed('', 'mediation', 'SPEC_MISSING_KEYS'),
    },
    { fn: 'propose', step: propose, e: ev('K_PLAN_REQ_DISPATCH', 'STOPPED'), out: failClosed('X', 'mediation', 'SPEC_INVALID_INPUT') },
    {
      fn: 'propose',
      step: propose,
      e: ev('K_PLAN_REQ_DISPATCH', 'PAUSE_FOR_HITL'),
      out: {
        id: 'X::plan_proposed',
        layer: 'mediation',
        decision: 'PAUSE_FOR_HITL',
        kind: 'K_PLAN_PROPOSED',
        reason: 'MEDIATION_PLAN_PROPOSED',
        ...unsealed,
      },
    },
    // C3: kind first, then keys, then pairing.
    { fn: 'ack', step: ack, e: ev('K_PLAN_REQ_DISPATCH', 'PAUSE_FOR_HITL', {}, ''), out: null },
    {
      fn: 'ack',
      step: ack,
      e: ev('K_PLAN_PROPOSED', 'PAUSE_FOR_HITL', { conflict_fingerprint: '' }),
      out: failClosed('X', 'maestro', 'SPEC_MISSING_KEYS'),
    },
    { fn: 'ack', step: ack, e: ev('K_PLAN_PROPOSED', 'STOPPED'), out: failClosed('X', 'maestro', 'SPEC_INVALID_INPUT') },
    {
      fn: 'ack',
      step: ack,
      e: ev('K_PLAN_PROPOSED', 'PAUSE_FOR_HITL'),
      out: {
        id: 'X::plan_received',
        layer: 'maestro',
        decision: 'PAUSE_FOR_HITL',
        kind: 'K_PLAN_RECEIVED',
        reason: 'MAESTRO_PLAN_RECEIVED',
        ...unsealed,
      },
    },
    // D: keys, pairing, then only END_SESSION_RECOMMENDED/K_END_RECOMMENDED stops.
    {
      fn: 'stop',
      step: stop,
      e: ev('K_END_RECOMMENDED', 'END_SESSION_RECOMMENDED', {}, ''),
      out: failClosed('', 'maestro', 'SPEC_MISSING_KEYS'),
    },
    {
      fn: 'stop',
      step: stop,
      e: ev('K_HITL_PAUSE', 'PAUSE_FOR_HITL', { session_id: '' }),
      out: failClosed('X', 'maestro', 'SPEC_MISSING_KEYS'),
    },
    { fn: 'stop', step: stop, e: ev('K_END_RECOMMENDED', 'PAUSE_FOR_HITL'), out: failClosed('X', 'maestro', 'SPEC_INVALID_INPUT') },
    { fn: 'stop', step: stop, e: ev('K_BOGUS', 'END_SESSION_RECOMMENDED'), out: failClosed('X', 'maestro', 'SPEC_INVALID_INPUT') },
    { fn: 'stop', step: stop, e: ev('K_HITL_PAUSE', 'PAUSE_FOR_HITL'), out: null },
    { fn: 'stop', step: stop, e: ev('K_STOPPED', 'STOPPED'), out: null },
    {
      fn: 'stop',
      step: stop,
      e: ev('K_END_RECOMMENDED', 'END_SESSION_RECOMMENDED'),
      out: {
        id: 'X::stop',
        layer: 'maestro',
        decision: 'STOPPED',
        kind: 'K_STOPPED',
        reason: 'ACC_END_SESSION_AFTER_4_HITL',
        sealed: true,
        overrideable: false,
      },
    },
  ])('$fn($e.kind/$e.decision, id "$e.event_id", session "$e.session_id", fp "$e.conflict_fingerprint")', ({ step, e, out }) => {
    const state = new SessionState('S1');
    const got = step(state, e);
    expect(brief(got)).toEqual(out);
    if (got !== null) expect(LoopEvent.safeParse(got).success).toBe(true);
  });

  it.each([
    { fn: 'dispatch', step: dispatch, e: ev('K_PLAN_REQUESTED', 'PAUSE_FOR_HITL') },
    { fn: 'propose', step: propose, e: ev('K_PLAN_REQ_DISPATCH', 'PAUSE_FOR_HITL') },
    { fn: 'ack', step: ack, e: ev('K_PLAN_PROPOSED', 'PAUSE_FOR_HITL') },
    { fn: 'stop', step: stop, e: ev('K_END_RECOMMENDED', 'END_SESSION_RECOMMENDED') },
  ])('$fn is one-shot: a retry with another event id on the same conflict gives null', ({ step, e }) => {
    const state = new SessionState('S1');
    expect(step(state, e)).not.toBeNull();
    expect(step(state, { ...e, event_id: 'Y' })).toBeNull();
  });

  it.each([
    { fn: 'dispatch', step: dispatch, e: ev('K_PLAN_REQUESTED', 'PAUSE_FOR_HITL') },
    { fn: 'propose', step: propose, e: ev('K_PLAN_REQ_DISPATCH', 'PAUSE_FOR_HITL') },
    { fn: 'ack', step: ack, e: ev('K_PLAN_PROPOSED', 'PAUSE_FOR_HITL') },
  ])('$fn keys its one-shot set by conflict: another fingerprint goes through', ({ step, e }) => {
    const state = new SessionState('S1');
    step(state, e);
    expect(step(state, { ...e, conflict_fingerprint: 'fp2' })).not.toBeNull();
  });

  it('copies identifiers from the cause and carries the plan text in the proposal', () => {
    const e = makeLoopEvent('D1', { kind: 'K_PLAN_REQ_DISPATCH', run_id: 'R5', timestamp: 'T', conflict_fingerprint: 'fp:q' });
    expect(mediationProposePlan(new SessionState('S1'), e, 'split the work')).toEqual({
      event_id: 'D1::plan_proposed',
      timestamp: 'T',
      session_id: 'S1',
      run_id: 'R5',
      layer: 'mediation',
      decision: 'PAUSE_FOR_HITL',
      kind: 'K_PLAN_PROPOSED',
      reason_code: 'MEDIATION_PLAN_PROPOSED',
      conflict_fingerprint: 'fp:q',
      sealed: false,
      overrideable: true,
      final_decider: 'SYSTEM',
      payload: { plan: 'split the work' },
    });
  });

  it('never compares the state session with the event session', () => {
    const state = new SessionState('OTHER');
    expect(dispatch(state, ev('K_PLAN_REQUESTED', 'PAUSE_FOR_HITL'))?.kind).toBe('K_PLAN_REQ_DISPATCH');
  });

  it('fails closed without touching the state', () => {
    const state = new SessionState('S1');
    dispatch(state, ev('K_BOGUS', 'PAUSE_FOR_HITL'));
    stop(state, ev('K_END_RECOMMENDED', 'PAUSE_FOR_HITL'));
    expect(state.toSnapshot()).toEqual(new SessionState('S1').toSnapshot());
  });
});

describe('terminal guard and stop', () => {
  it('is null on an unstopped state ([derived])', () => {
    expect(guard(new SessionState('S1'), makeLoopEvent('Z'))).toBeNull();
  });

  it('answers every event after a stop with a sealed STOPPED, "{id}::terminal_guard" ([derived])', () => {
    const state = new SessionState('S1');
    stop(state, ev('K_END_RECOMMENDED', 'END_SESSION_RECOMMENDED'));
    for (const e of [
      makeLoopEvent('Z'),
      makeLoopEvent('Z', { conflict_fingerprint: 'other', session_id: 'S2' }),
      makeLoopEvent('Z', { kind: 'K_BOGUS' }),
    ]) {
      expect(guard(state, e)).toEqual({
        event_id: 'Z::terminal_guard',
        timestamp: e.timestamp,
        session_id: e.session_id,
        run_id: 'R1',
        layer: 'maestro',
        decision: 'STOPPED',
        kind: 'K_STOPPED',
        reason_code: 'ACC_STOPPED_IS_TERMINAL',
        conflict_fingerprint: e.conflict_fingerprint,
        sealed: true,
        overrideable: false,
        final_decider: 'SYSTEM',
        payload: null,
      });
    }
  });

  it('stops once per session: a second stop gives null ([derived]), even on another conflict', () => {
    const state = new SessionState('S1');
    expect(stop(state, ev('K_END_RECOMMENDED', 'END_SESSION_RECOMMENDED'))?.event_id).toBe('X::stop');
    expect([state.isStopped, state.stopIssued]).toEqual([true, true]);
    expect(stop(state, ev('K_END_RECOMMENDED', 'END_SESSION_RECOMMENDED'))).toBeNull();
    expect(stop(state, ev('K_END_RECOMMENDED', 'END_SESSION_RECOMMENDED', { conflict_fingerprint: 'fp2' }, 'Y'))).toBeNull();
  });

  describe("with scope: 'conflict' (maestro's binding)", () => {
    const conflict = { scope: 'conflict' } as const;
    const endRec = (fp: string, id: string) => ev('K_END_RECOMMENDED', 'END_SESSION_RECOMMENDED', { conflict_fingerprint: fp }, id);

    it('guards only the stopped conflict key', () => {
      const state = new SessionState('S1');
      expect(enforceTerminalGuard(state, makeLoopEvent('Z'), conflict)).toBeNull();
      maestroMaybeStop(state, endRec('fp1', 'X'), conflict);
      expect(enforceTerminalGuard(state, makeLoopEvent('Z'), conflict)?.reason_code).toBe('ACC_STOPPED_IS_TERMINAL');
      expect(enforceTerminalGuard(state, makeLoopEvent('Z', { conflict_fingerprint: 'fp2' }), conflict)).toBeNull();
      expect(enforceTerminalGuard(state, makeLoopEvent('Z', { session_id: 'S2' }), conflict)).toBeNull();
    });

    it('stops once per conflict key', () => {
      const state = new SessionState('S1');
      expect(maestroMaybeStop(state, endRec('fp1', 'X'), conflict)?.event_id).toBe('X::stop');
      expect(maestroMaybeStop(state, endRec('fp1', 'Y'), conflict)).toBeNull();
      expect(maestroMaybeStop(state, endRec('fp2', 'W'), conflict)?.sealed).toBe(true);
      expect([...state.stoppedKeys].sort()).toEqual(['S1|fp1', 'S1|fp2']);
    });

    it('still fails closed first', () => {
      const state = new SessionState('S1');
      expect(maestroMaybeStop(state, endRec('', 'X'), conflict)?.reason_code).toBe('SPEC_MISSING_KEYS');
    });
  });
});

describe('maestroResetSessionStateOnNewSession', () => {
  it('clears both flags and every set', () => {
    const state = new SessionState('S1');
    dispatch(state, ev('K_PLAN_REQUESTED', 'PAUSE_FOR_HITL'));
    propose(state, ev('K_PLAN_REQ_DISPATCH', 'PAUSE_FOR_HITL'));
    ack(state, ev('K_PLAN_PROPOSED', 'PAUSE_FOR_HITL'));
    stop(state, ev('K_END_RECOMMENDED', 'END_SESSION_RECOMMENDED'));
    maestroResetSessionStateOnNewSession(state);
    expect(state.toSnapshot()).toEqual(new SessionState('S1').toSnapshot());
    expect(guard(state, makeLoopEvent('Z'))).toBeNull();
    expect(dispatch(state, ev('K_PLAN_REQUESTED', 'PAUSE_FOR_HITL'))).not.toBeNull();
  });
});
