import { describe, expect, it } from 'vitest';
import {
  emptyLoopPolicy,
  isConflictStopped,
  type LoopPolicyData,
  parseLoopPolicyData,
  type PauseOutcome,
  pausesFor,
  recordPause,
  recordPlan,
  resetLoopPolicy,
} from '../../../src/domain/loop-policy/workspace-loop.js';

const T0 = '2026-01-01T00:00:00.000Z';
const FP = 'fp:billing-queue';
const pause = (n: number, fingerprint = FP) => ({
  pauseId: `run-${n}-p1`,
  runId: `run-${n}`,
  fingerprint,
  reasonCode: 'ARBITRATION_INVESTIGATE',
  timestamp: T0,
});

/** Records pauses one after another, as runs of the same conflict keep pausing. */
function pauses(data: LoopPolicyData, inputs: ReturnType<typeof pause>[]): PauseOutcome[] {
  const outcomes: PauseOutcome[] = [];
  let current = data;
  for (const p of inputs) {
    const outcome = recordPause(current, p);
    outcomes.push(outcome);
    current = outcome.data;
  }
  return outcomes;
}

describe('the loop policy of a workspace, pause by pause', () => {
  const outcomes = pauses(
    emptyLoopPolicy('S1', T0),
    [1, 2, 3, 4, 5].map((n) => pause(n)),
  );

  it('counts the pauses of one conflict, until its line is stopped', () => {
    expect(outcomes.map((o) => o.count)).toEqual([1, 2, 3, 4, 4]);
    expect(pausesFor(outcomes[4]?.data as LoopPolicyData, FP)).toBe(4);
  });

  it('asks the synthesizer for a plan at the third pause, once', () => {
    expect(outcomes.map((o) => o.dispatch?.kind ?? null)).toEqual([null, null, 'K_PLAN_REQ_DISPATCH', null, null]);
    expect(outcomes[2]?.events.map((e) => e.kind)).toEqual(['K_PLAN_REQUESTED', 'K_PLAN_REQ_DISPATCH']);
    expect(outcomes[2]?.dispatch).toMatchObject({ run_id: 'run-3', reason_code: 'MAESTRO_PLAN_REQUEST_DISPATCHED', sealed: false });
  });

  it('stops the conflict at the fourth pause, sealed, once; a later pause on it meets the terminal guard', () => {
    expect(outcomes.map((o) => o.stop?.reason_code ?? null)).toEqual([
      null,
      null,
      null,
      'ACC_END_SESSION_AFTER_4_HITL',
      'ACC_STOPPED_IS_TERMINAL',
    ]);
    expect(outcomes[4]?.events).toEqual([
      expect.objectContaining({ event_id: 'run-5-p1::terminal_guard', kind: 'K_STOPPED', sealed: true, overrideable: false }),
    ]);
    expect(outcomes[4]?.dispatch).toBeNull();
    expect(outcomes[3]?.events.map((e) => e.kind)).toEqual(['K_END_RECOMMENDED', 'K_STOPPED']);
    expect(outcomes[3]?.stop).toMatchObject({
      decision: 'STOPPED',
      sealed: true,
      overrideable: false,
      reason_code: 'ACC_END_SESSION_AFTER_4_HITL',
    });
    expect(isConflictStopped(outcomes[2]?.data as LoopPolicyData, FP)).toBe(false);
    expect(isConflictStopped(outcomes[3]?.data as LoopPolicyData, FP)).toBe(true);
  });

  it('stops only that conflict: another one counts from zero and goes on', () => {
    const stopped = outcomes[4]?.data as LoopPolicyData;
    const other = recordPause(stopped, pause(9, 'fp:other'));
    expect(other.count).toBe(1);
    expect(isConflictStopped(other.data, 'fp:other')).toBe(false);
    expect(pausesFor(other.data, 'fp:never-paused')).toBe(0);
  });

  it('never counts the same pause twice (a replayed pause id)', () => {
    const [first] = pauses(emptyLoopPolicy('S1', T0), [pause(1)]);
    const again = recordPause(first?.data as LoopPolicyData, pause(1));
    expect(again.count).toBe(1);
    expect(again.events).toEqual([]);
  });

  it('changes nothing in the data it was given (the store writes the new data)', () => {
    const start = emptyLoopPolicy('S1', T0);
    const before = JSON.stringify(start);
    recordPause(start, pause(1));
    expect(JSON.stringify(start)).toBe(before);
  });
});

describe('recordPlan: the plan the synthesizer proposed', () => {
  const third = pauses(
    emptyLoopPolicy('S1', T0),
    [1, 2, 3].map((n) => pause(n)),
  )[2] as PauseOutcome;

  it('is proposed and acknowledged, once', () => {
    const dispatch = third.dispatch;
    if (!dispatch) throw new Error('the third pause dispatches a plan request');
    const first = recordPlan(third.data, dispatch, 'Ask finance which queue they already run.');
    expect(first.events.map((e) => e.kind)).toEqual(['K_PLAN_PROPOSED', 'K_PLAN_RECEIVED']);
    expect(first.events[0]?.payload).toEqual({ plan: 'Ask finance which queue they already run.' });
    expect(recordPlan(first.data, dispatch, 'Another plan').events).toEqual([]);
  });

  it('records nothing for an event that is not a dispatched request', () => {
    const requested = third.events[0];
    if (!requested) throw new Error('the third pause requests a plan');
    expect(recordPlan(third.data, requested, 'plan').events).toEqual([]);
  });
});

describe('resetLoopPolicy: maestro session reset', () => {
  const stopped = pauses(
    emptyLoopPolicy('S1', T0),
    [1, 2, 3, 4].map((n) => pause(n)),
  ).at(-1)?.data as LoopPolicyData;

  it('starts a new session: nothing counted, nothing stopped', () => {
    const fresh = resetLoopPolicy(stopped, 'S2', '2026-01-02T00:00:00.000Z');
    expect(fresh).toMatchObject({ session_id: 'S2', started_at: '2026-01-02T00:00:00.000Z' });
    expect(pausesFor(fresh, FP)).toBe(0);
    expect(isConflictStopped(fresh, FP)).toBe(false);
    expect(fresh.counter.counts).toEqual([]);
    expect(recordPause(fresh, pause(1)).count).toBe(1);
  });

  it('lets the same pause id count again in the new session', () => {
    const fresh = resetLoopPolicy(stopped, 'S2', T0);
    expect(recordPause(fresh, pause(4)).count).toBe(1);
  });
});

describe('parseLoopPolicyData: .maestro/loop-policy.json as read', () => {
  it('reads back what was written', () => {
    const data = pauses(
      emptyLoopPolicy('S1', T0),
      [1, 2, 3, 4].map((n) => pause(n)),
    ).at(-1)?.data;
    expect(parseLoopPolicyData(JSON.parse(JSON.stringify(data)))).toEqual({ ok: true, value: data });
  });

  it.each([
    ['another version', { schemaVersion: 2 }, 'schemaVersion'],
    ['no session', { session_id: '' }, 'session_id'],
    [
      'a counter that repeats a conflict',
      {
        counter: {
          ...emptyLoopPolicy('S', T0).counter,
          counts: [
            { conflict_key: 'k', count: 1 },
            { conflict_key: 'k', count: 2 },
          ],
        },
      },
      'counter.counts',
    ],
    ['an unknown key', { stopped: true }, 'unknown key "stopped"'],
  ])('refuses %s, naming where', (_what, change, said) => {
    const parsed = parseLoopPolicyData({ ...emptyLoopPolicy('S1', T0), ...change });
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.issues.join('\n')).toContain(said);
  });
});
