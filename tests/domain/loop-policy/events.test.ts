import { describe, expect, it } from 'vitest';
import {
  conflictKeyOf,
  failClosedEvent,
  LoopEvent,
  validateKindDecisionPairing,
  validateMinKeys,
} from '../../../src/domain/loop-policy/events.js';
import { makeLoopEvent } from '../../helpers/loop-event.js';
import { SpecInvalidError } from '../../../src/domain/loop-policy/spec-invalid-error.js';
import {
  assertKindsDisjointFromDecisions,
  FAIL_CLOSED_REASON_CODES,
  FINAL_SYSTEM,
  LOOP_DECISIONS,
  LOOP_KINDS,
  LOOP_LAYERS,
  LOOP_REASON_CODES,
} from '../../../src/domain/loop-policy/vocabulary.js';

describe('vocabulary', () => {
  it('has exactly 3 decisions (no RUN) and 7 kinds', () => {
    expect(LOOP_DECISIONS).toEqual(['PAUSE_FOR_HITL', 'STOPPED', 'END_SESSION_RECOMMENDED']);
    expect([...LOOP_KINDS].sort()).toEqual(
      [
        'K_END_RECOMMENDED',
        'K_HITL_PAUSE',
        'K_PLAN_PROPOSED',
        'K_PLAN_RECEIVED',
        'K_PLAN_REQUESTED',
        'K_PLAN_REQ_DISPATCH',
        'K_STOPPED',
      ].sort(),
    );
    expect(LOOP_LAYERS).toEqual(['mediation', 'acc_gate', 'maestro']);
    expect(FAIL_CLOSED_REASON_CODES).toEqual(['SPEC_INVALID_INPUT', 'SPEC_MISSING_KEYS']);
    expect(LOOP_REASON_CODES).toHaveLength(9);
    expect(FINAL_SYSTEM).toBe('SYSTEM');
  });

  // Reference test 1.
  it('keeps kind values disjoint from decision values', () => {
    const decisions = new Set<string>(LOOP_DECISIONS);
    expect(LOOP_KINDS.filter((k) => decisions.has(k))).toEqual([]);
    expect(() => assertKindsDisjointFromDecisions(LOOP_KINDS, LOOP_DECISIONS)).not.toThrow();
  });

  it('throws SPEC_INVALID when a kind collides with a decision (the import-time check)', () => {
    const collide = () => assertKindsDisjointFromDecisions(['K_HITL_PAUSE', 'STOPPED', 'PAUSE_FOR_HITL'], LOOP_DECISIONS);
    expect(collide).toThrow(SpecInvalidError);
    expect(collide).toThrow('SPEC_INVALID: kind values collide with Decision values: ["PAUSE_FOR_HITL","STOPPED"]');
  });
});

describe('makeLoopEvent', () => {
  it('has the reference mk_event defaults', () => {
    expect(makeLoopEvent('E1')).toEqual({
      event_id: 'E1',
      timestamp: '2026-01-02T12:00:00+09:00',
      session_id: 'S1',
      run_id: 'R1',
      layer: 'acc_gate',
      decision: 'PAUSE_FOR_HITL',
      kind: 'K_HITL_PAUSE',
      reason_code: 'SOME_BLOCK',
      conflict_fingerprint: 'fp1',
      sealed: false,
      overrideable: true,
      final_decider: 'SYSTEM',
      payload: null,
    });
    expect(makeLoopEvent('E2', { session_id: 'S2' }).session_id).toBe('S2');
  });

  it('builds the conflict key as "{session_id}|{conflict_fingerprint}"', () => {
    expect(conflictKeyOf(makeLoopEvent('E1', { conflict_fingerprint: 'fp:X' }))).toBe('S1|fp:X');
  });
});

describe('validateMinKeys', () => {
  it.each([
    { name: 'all present', over: {}, id: 'E1', ok: true },
    { name: 'empty event_id', over: {}, id: '', ok: false },
    { name: 'empty session_id', over: { session_id: '' }, id: 'E1', ok: false },
    { name: 'empty fingerprint', over: { conflict_fingerprint: '' }, id: 'E1', ok: false },
    { name: 'empty run_id is not checked', over: { run_id: '' }, id: 'E1', ok: true },
    { name: 'empty timestamp is not checked', over: { timestamp: '' }, id: 'E1', ok: true },
  ])('$name → $ok', ({ over, id, ok }) => {
    expect(validateMinKeys(makeLoopEvent(id, over))).toBe(ok);
  });
});

describe('validateKindDecisionPairing', () => {
  const expected: Record<string, string> = {
    K_HITL_PAUSE: 'PAUSE_FOR_HITL',
    K_PLAN_REQUESTED: 'PAUSE_FOR_HITL',
    K_PLAN_REQ_DISPATCH: 'PAUSE_FOR_HITL',
    K_PLAN_PROPOSED: 'PAUSE_FOR_HITL',
    K_PLAN_RECEIVED: 'PAUSE_FOR_HITL',
    K_END_RECOMMENDED: 'END_SESSION_RECOMMENDED',
    K_STOPPED: 'STOPPED',
  };
  const table = [...LOOP_KINDS, 'K_BOGUS', '', 'STOPPED'].flatMap((kind) =>
    [...LOOP_DECISIONS, 'RUN'].map((decision) => ({ kind, decision, ok: expected[kind] === decision })),
  );

  it.each(table)('$kind + $decision → $ok', ({ kind, decision, ok }) => {
    expect(validateKindDecisionPairing({ kind, decision })).toBe(ok);
  });
});

describe('failClosedEvent', () => {
  it('with a base: "{id}::fail_closed", copies identifiers and records the original', () => {
    const base = makeLoopEvent('X', { kind: 'K_END_RECOMMENDED', run_id: 'R9', conflict_fingerprint: 'fp:badpair' });
    expect(failClosedEvent(base, 'SPEC_INVALID_INPUT', 'maestro')).toEqual({
      event_id: 'X::fail_closed',
      timestamp: '2026-01-02T12:00:00+09:00',
      session_id: 'S1',
      run_id: 'R9',
      layer: 'maestro',
      decision: 'PAUSE_FOR_HITL',
      kind: 'K_PLAN_RECEIVED',
      reason_code: 'SPEC_INVALID_INPUT',
      conflict_fingerprint: 'fp:badpair',
      sealed: false,
      overrideable: true,
      final_decider: 'SYSTEM',
      payload: {
        note: 'fail-closed',
        original_kind: 'K_END_RECOMMENDED',
        original_decision: 'PAUSE_FOR_HITL',
        original_reason_code: 'SOME_BLOCK',
      },
    });
  });

  it('without a base: bare "fail_closed" with empty identifiers', () => {
    expect(failClosedEvent(null, 'SPEC_MISSING_KEYS', 'mediation')).toEqual({
      event_id: 'fail_closed',
      timestamp: '',
      session_id: '',
      run_id: '',
      layer: 'mediation',
      decision: 'PAUSE_FOR_HITL',
      kind: 'K_PLAN_RECEIVED',
      reason_code: 'SPEC_MISSING_KEYS',
      conflict_fingerprint: '',
      sealed: false,
      overrideable: true,
      final_decider: 'SYSTEM',
      payload: { note: 'fail-closed', original: null },
    });
  });

  it.each(LOOP_LAYERS.flatMap((layer) => FAIL_CLOSED_REASON_CODES.map((code) => ({ layer, code }))))(
    'is a valid, non-counting, unsealed pause ($code at $layer)',
    ({ layer, code }) => {
      const out = failClosedEvent(makeLoopEvent('E1'), code, layer);
      expect(LoopEvent.safeParse(out).success).toBe(true);
      expect(validateKindDecisionPairing(out)).toBe(true);
      expect(out.kind).not.toBe('K_HITL_PAUSE');
      expect(Object.isFrozen(out)).toBe(true);
      expect(Object.isFrozen(out.payload)).toBe(true);
    },
  );
});

describe('LoopEvent schema', () => {
  const valid = failClosedEvent(makeLoopEvent('E1'), 'SPEC_MISSING_KEYS', 'maestro');

  it.each([
    { name: 'a sealed pause', patch: { sealed: true } },
    { name: 'an overrideable stop', patch: { kind: 'K_STOPPED', decision: 'STOPPED', sealed: true, overrideable: true } },
    { name: 'a mis-paired end recommendation', patch: { kind: 'K_END_RECOMMENDED' } },
    { name: 'a HITL pause (never emitted)', patch: { kind: 'K_HITL_PAUSE' } },
    { name: 'an unknown layer', patch: { layer: 'rfl' } },
    { name: 'a USER decider', patch: { final_decider: 'USER' } },
  ])('rejects $name', ({ patch }) => {
    expect(LoopEvent.safeParse({ ...valid, ...patch }).success).toBe(false);
  });
});
