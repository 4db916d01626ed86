import { describe, expect, it } from 'vitest';
import { LoopEvent, type LoopEventInput } from '../../../src/domain/loop-policy/events.js';
import { makeLoopEvent } from '../../helpers/loop-event.js';
import { HitlCounter, HitlCounterSnapshot, type CounterResult } from '../../../src/domain/loop-policy/hitl-counter.js';
import { createLoopPolicySpec } from '../../../src/domain/loop-policy/spec.js';

/** A result reduced to what the vectors state: the count and the ids emitted. */
function summary(r: CounterResult): [number, string | null, string | null] {
  return [r.count, r.planRequested?.event_id ?? null, r.endRecommended?.event_id ?? null];
}

const pause = (id: string, over: Partial<Omit<LoopEventInput, 'event_id'>> = {}) => makeLoopEvent(id, over);

describe('HitlCounter.maybeIncrementAndEmit', () => {
  // [derived] counting and dedupe (S1/fp1).
  it('counts E1, E1, E2..E6 as 1, 1, 2, 3, 4, 5, 6 and fires at exactly 3 and 4', () => {
    const counter = new HitlCounter();
    const got = ['E1', 'E1', 'E2', 'E3', 'E4', 'E5', 'E6'].map((id) => summary(counter.maybeIncrementAndEmit(pause(id))));
    expect(got).toEqual([
      [1, null, null],
      [1, null, null],
      [2, null, null],
      [3, 'E3::plan_requested', null],
      [4, null, 'E4::end_recommended'],
      [5, null, null],
      [6, null, null],
    ]);
  });

  it('emits the plan request and end recommendation with the reference fields', () => {
    const counter = new HitlCounter();
    const base = { conflict_fingerprint: 'fp:X', run_id: 'R7', timestamp: 'T' };
    counter.maybeIncrementAndEmit(pause('E1', base));
    counter.maybeIncrementAndEmit(pause('E2', base));
    const third = counter.maybeIncrementAndEmit(pause('E3', base));
    const fourth = counter.maybeIncrementAndEmit(pause('E4', base));
    const common = {
      timestamp: 'T',
      session_id: 'S1',
      run_id: 'R7',
      conflict_fingerprint: 'fp:X',
      sealed: false,
      overrideable: true,
      final_decider: 'SYSTEM',
      payload: null,
    };
    expect(third).toEqual({
      count: 3,
      planRequested: {
        ...common,
        event_id: 'E3::plan_requested',
        layer: 'mediation',
        decision: 'PAUSE_FOR_HITL',
        kind: 'K_PLAN_REQUESTED',
        reason_code: 'REL_PLAN_REQUESTED_AFTER_3_HITL',
      },
      endRecommended: null,
    });
    expect(fourth).toEqual({
      count: 4,
      planRequested: null,
      endRecommended: {
        ...common,
        event_id: 'E4::end_recommended',
        layer: 'acc_gate',
        decision: 'END_SESSION_RECOMMENDED',
        kind: 'K_END_RECOMMENDED',
        reason_code: 'ACC_LOOP_BUDGET_EXCEEDED',
      },
    });
    for (const e of [third.planRequested, fourth.endRecommended]) {
      expect(LoopEvent.safeParse(e).success).toBe(true);
      expect(Object.isFrozen(e)).toBe(true);
    }
  });

  it.each([
    { name: 'the same event_id in another session', event: pause('E1', { session_id: 'S2' }) },
    { name: 'the same event_id under another fingerprint', event: pause('E1', { conflict_fingerprint: 'fp2' }) },
  ])('scopes counts per session|fp: $name counts 1', ({ event }) => {
    const counter = new HitlCounter();
    counter.maybeIncrementAndEmit(pause('E1'));
    expect(summary(counter.maybeIncrementAndEmit(event))).toEqual([1, null, null]);
    expect(counter.countFor('S1', 'fp1')).toBe(1);
  });

  it.each([
    { name: 'empty event_id', event: pause('') },
    { name: 'empty session_id', event: pause('E9', { session_id: '' }) },
    { name: 'empty fingerprint', event: pause('E9', { conflict_fingerprint: '' }) },
  ])('$name → (0, null, null) with no side effect and no fail-closed event', ({ event }) => {
    const counter = new HitlCounter();
    counter.maybeIncrementAndEmit(pause('E1'));
    const before = counter.toSnapshot();
    expect(counter.maybeIncrementAndEmit(event)).toEqual({ count: 0, planRequested: null, endRecommended: null });
    expect(counter.toSnapshot()).toEqual(before);
  });

  it.each(['K_PLAN_REQUESTED', 'K_PLAN_REQ_DISPATCH', 'K_PLAN_PROPOSED', 'K_PLAN_RECEIVED', 'K_END_RECOMMENDED', 'K_STOPPED', 'K_BOGUS'])(
    'never counts %s: returns the current count',
    (kind) => {
      const counter = new HitlCounter();
      expect(summary(counter.maybeIncrementAndEmit(pause('N0', { kind })))).toEqual([0, null, null]);
      counter.maybeIncrementAndEmit(pause('E1'));
      counter.maybeIncrementAndEmit(pause('E2'));
      expect(summary(counter.maybeIncrementAndEmit(pause('N1', { kind })))).toEqual([2, null, null]);
      expect(counter.countFor('S1', 'fp1')).toBe(2);
    },
  );

  it('does not validate input pairing: K_HITL_PAUSE with STOPPED still counts ([derived])', () => {
    const counter = new HitlCounter();
    expect(summary(counter.maybeIncrementAndEmit(pause('E1', { decision: 'STOPPED' })))).toEqual([1, null, null]);
  });

  it('follows a custom spec: (2, 1) fires at 1 and 2', () => {
    const counter = new HitlCounter({ spec: createLoopPolicySpec({ hitl_max_rounds: 2, plan_request_round: 1 }) });
    expect(summary(counter.maybeIncrementAndEmit(pause('E1')))).toEqual([1, 'E1::plan_requested', null]);
    expect(summary(counter.maybeIncrementAndEmit(pause('E2')))).toEqual([2, null, 'E2::end_recommended']);
  });
});

describe('HitlCounter.resetIfAllowed', () => {
  function countedTo(n: number, fp = 'fp1'): HitlCounter {
    const counter = new HitlCounter();
    for (let i = 1; i <= n; i += 1) counter.maybeIncrementAndEmit(pause(`E${i}`, { conflict_fingerprint: fp }));
    return counter;
  }

  // [derived] reset vectors, plus the remaining reason.
  it.each([
    { reason: 'conflict_fingerprint_change', oldFp: 'fp1', newFp: 'fp1', resets: false },
    { reason: 'user_provides_required_info_for_blocking_fields', oldFp: 'fp1', newFp: 'fp1', resets: false },
    { reason: 'bogus', oldFp: 'fp1', newFp: 'fp2', resets: false },
    { reason: 'conflict_fingerprint_change', oldFp: 'fp1', newFp: 'fp2', resets: true },
    { reason: 'user_provides_required_info_for_blocking_fields', oldFp: 'fp1', newFp: 'fp2', resets: true },
  ])('$reason $oldFp→$newFp resets: $resets', ({ reason, oldFp, newFp, resets }) => {
    const counter = countedTo(2);
    expect(counter.resetIfAllowed('S1', oldFp, newFp, reason)).toBe(resets);
    expect(counter.countFor('S1', 'fp1')).toBe(resets ? 0 : 2);
  });

  it('keeps the dedupe bucket on a fingerprint reset: a replayed E1 gives 0, a new N1 gives 1 ([derived])', () => {
    const counter = countedTo(2);
    counter.resetIfAllowed('S1', 'fp1', 'fp2', 'user_provides_required_info_for_blocking_fields');
    expect(summary(counter.maybeIncrementAndEmit(pause('E1')))).toEqual([0, null, null]);
    expect(summary(counter.maybeIncrementAndEmit(pause('N1')))).toEqual([1, null, null]);
  });

  it('lets the thresholds fire again after a fingerprint reset', () => {
    const counter = countedTo(4);
    counter.resetIfAllowed('S1', 'fp1', 'fp2', 'conflict_fingerprint_change');
    const got = ['N1', 'N2', 'N3', 'N4'].map((id) => summary(counter.maybeIncrementAndEmit(pause(id))));
    expect(got).toEqual([
      [1, null, null],
      [2, null, null],
      [3, 'N3::plan_requested', null],
      [4, null, 'N4::end_recommended'],
    ]);
  });

  it('only touches the old key on a fingerprint reset', () => {
    const counter = countedTo(2, 'fpA');
    counter.maybeIncrementAndEmit(pause('B1', { conflict_fingerprint: 'fpB' }));
    counter.resetIfAllowed('S1', 'fpA', 'fpB', 'conflict_fingerprint_change');
    expect([counter.countFor('S1', 'fpA'), counter.countFor('S1', 'fpB')]).toEqual([0, 1]);
  });

  it('explicit_new_session_start clears the whole session (even with the same fp), other sessions untouched', () => {
    const counter = countedTo(4, 'fpA');
    counter.maybeIncrementAndEmit(pause('B1', { conflict_fingerprint: 'fpB' }));
    counter.maybeIncrementAndEmit(pause('E1', { session_id: 'S10' }));
    counter.maybeIncrementAndEmit(pause('E1', { session_id: 'S2' }));
    expect(counter.resetIfAllowed('S1', 'fpA', 'fpA', 'explicit_new_session_start')).toBe(true);
    expect(counter.toSnapshot()).toEqual({
      schemaVersion: 1,
      counts: [
        { conflict_key: 'S10|fp1', count: 1 },
        { conflict_key: 'S2|fp1', count: 1 },
      ],
      plan_requested_keys: [],
      end_recommended_keys: [],
      seen: [
        { session_id: 'S10', dedupe_ids: ['S10|fp1|E1'] },
        { session_id: 'S2', dedupe_ids: ['S2|fp1|E1'] },
      ],
    });
    // The bucket is gone, so the old ids count again and the thresholds fire again.
    const got = ['E1', 'E2', 'E3', 'E4'].map((id) => summary(counter.maybeIncrementAndEmit(pause(id, { conflict_fingerprint: 'fpA' }))));
    expect(got.map(([n]) => n)).toEqual([1, 2, 3, 4]);
    expect(got[2]?.[1]).toBe('E3::plan_requested');
    expect(got[3]?.[2]).toBe('E4::end_recommended');
  });
});

describe('HitlCounter snapshots', () => {
  const flow: LoopEventInput[] = [
    pause('E1'),
    pause('E1'),
    pause('E2'),
    pause('X1', { session_id: 'S2', conflict_fingerprint: 'fp:b' }),
    pause('E3'),
    pause('K1', { kind: 'K_PLAN_REQUESTED' }),
    pause('E3'),
    pause('E4'),
    pause('E5'),
    pause('X1', { session_id: 'S2', conflict_fingerprint: 'fp:b' }),
    pause('X2', { session_id: 'S2', conflict_fingerprint: 'fp:b' }),
    pause('X3', { session_id: 'S2', conflict_fingerprint: 'fp:b' }),
  ];

  it.each([0, 1, 2, 3, 4, 5, 7, 9, flow.length])(
    'a counter restored after %i events counts, dedupes and fires exactly like the original',
    (cut) => {
      const original = new HitlCounter();
      for (const e of flow.slice(0, cut)) original.maybeIncrementAndEmit(e);
      const json: unknown = JSON.parse(JSON.stringify(original.toSnapshot()));
      const restored = HitlCounter.fromSnapshot(HitlCounterSnapshot.parse(json));
      expect(restored.toSnapshot()).toEqual(original.toSnapshot());
      const rest = [...flow.slice(cut), ...flow];
      expect(rest.map((e) => restored.maybeIncrementAndEmit(e))).toEqual(rest.map((e) => original.maybeIncrementAndEmit(e)));
      expect(restored.toSnapshot()).toEqual(original.toSnapshot());
    },
  );

  it('serializes identically whatever the insertion order', () => {
    const a = new HitlCounter();
    const b = new HitlCounter();
    const events = [
      pause('E1', { session_id: 'Sb' }),
      pause('E2', { conflict_fingerprint: 'fpZ' }),
      pause('E1', { session_id: 'Sa' }),
      pause('E3'),
    ];
    for (const e of events) a.maybeIncrementAndEmit(e);
    for (const e of [...events].reverse()) b.maybeIncrementAndEmit(e);
    expect(JSON.stringify(a.toSnapshot())).toBe(JSON.stringify(b.toSnapshot()));
    expect(a.toSnapshot().counts.map((c) => c.conflict_key)).toEqual(['S1|fp1', 'S1|fpZ', 'Sa|fp1', 'Sb|fp1']);
  });

  it('restores the threshold flags: a restored counter does not fire twice', () => {
    const original = new HitlCounter();
    for (const id of ['E1', 'E2', 'E3', 'E4']) original.maybeIncrementAndEmit(pause(id));
    const snap = original.toSnapshot();
    expect(snap.plan_requested_keys).toEqual(['S1|fp1']);
    expect(snap.end_recommended_keys).toEqual(['S1|fp1']);
    const restored = HitlCounter.fromSnapshot(snap);
    expect(summary(restored.maybeIncrementAndEmit(pause('E4')))).toEqual([4, null, null]);
    expect(summary(restored.maybeIncrementAndEmit(pause('E5')))).toEqual([5, null, null]);
  });

  const good = {
    schemaVersion: 1,
    counts: [{ conflict_key: 'S1|fp1', count: 1 }],
    plan_requested_keys: [],
    end_recommended_keys: [],
    seen: [{ session_id: 'S1', dedupe_ids: ['S1|fp1|E1'] }],
  };

  it('accepts a well-formed snapshot', () => {
    expect(HitlCounterSnapshot.safeParse(good).success).toBe(true);
  });

  it.each([
    { name: 'another schema version', bad: { ...good, schemaVersion: 2 } },
    { name: 'a zero count', bad: { ...good, counts: [{ conflict_key: 'S1|fp1', count: 0 }] } },
    { name: 'a fractional count', bad: { ...good, counts: [{ conflict_key: 'S1|fp1', count: 1.5 }] } },
    { name: 'a repeated conflict key', bad: { ...good, counts: [...good.counts, ...good.counts] } },
    { name: 'a repeated flag', bad: { ...good, plan_requested_keys: ['S1|fp1', 'S1|fp1'] } },
    { name: 'a repeated session bucket', bad: { ...good, seen: [...good.seen, ...good.seen] } },
    { name: 'an unknown key', bad: { ...good, extra: true } },
    { name: 'a missing field', bad: { schemaVersion: 1, counts: [] } },
  ])('rejects $name with readable issues', ({ bad }) => {
    const parsed = HitlCounterSnapshot.safeParse(bad);
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(parsed.error.issues.length).toBeGreaterThan(0);
  });
});
