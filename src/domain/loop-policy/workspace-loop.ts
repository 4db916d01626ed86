import { z } from 'zod';
import { formatIssues, type Parsed } from '../issues.js';
import { conflictKeyOf, type LoopEvent, type LoopEventInput } from './events.js';
import { HitlCounter, HitlCounterSnapshot } from './hitl-counter.js';
import {
  enforceTerminalGuard,
  maestroAckPlanReceived,
  maestroDispatchPlanRequest,
  maestroMaybeStop,
  mediationProposePlan,
} from './maestro-state.js';
import { SessionState, SessionStateSnapshot } from './session-state.js';

/**
 * The workspace's loop policy, as persisted in `.maestro/loop-policy.json`: the council session
 * (changed only by `maestro session reset`), the HITL counter and maestro's state. Pure functions
 * over plain data; the store adds locking and atomic writes.
 */
export const LoopPolicyData = z.strictObject({
  schemaVersion: z.literal(1),
  session_id: z.string().min(1),
  started_at: z.string(),
  counter: HitlCounterSnapshot,
  state: SessionStateSnapshot,
});
export type LoopPolicyData = z.infer<typeof LoopPolicyData>;

export function parseLoopPolicyData(json: unknown): Parsed<LoopPolicyData> {
  const result = LoopPolicyData.safeParse(json);
  if (!result.success) return { ok: false, issues: formatIssues(result.error) };
  return { ok: true, value: result.data };
}

/** The stored text (a file's, or a row's as JSON): not valid JSON is one more way of being corrupt. */
export function parseLoopPolicyText(text: string): Parsed<LoopPolicyData> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, issues: ['not valid JSON'] };
  }
  return parseLoopPolicyData(json);
}

/**
 * A corrupt loop policy is never a new session by itself: the session's sealed stops (policy.md's
 * terminal guard) would be lost to it. Only the explicit new session start, `maestro session reset`, ends it.
 */
export function corruptLoopPolicyMessage(where: string, issues: readonly string[]): string {
  return (
    `the loop policy ${where} is corrupt (${issues.slice(0, 2).join('; ')}): its sealed stops cannot be known, so nothing that ` +
    'needs them goes on. `maestro session reset` starts a new council session (the corrupt copy is kept)'
  );
}

export function emptyLoopPolicy(sessionId: string, now: string): LoopPolicyData {
  return {
    schemaVersion: 1,
    session_id: sessionId,
    started_at: now,
    counter: new HitlCounter().toSnapshot(),
    state: new SessionState(sessionId).toSnapshot(),
  };
}

/** maestro's binding: the terminal guard and the stop are scoped to the conflict (policy.md). */
const SCOPE = { scope: 'conflict' } as const;

export interface PauseInput {
  readonly pauseId: string;
  readonly runId: string;
  readonly fingerprint: string;
  readonly reasonCode: string;
  readonly timestamp: string;
}

export interface PauseOutcome {
  readonly data: LoopPolicyData;
  readonly count: number;
  /** Every loop-policy event this pause produced, in order (for the audit log). */
  readonly events: LoopEvent[];
  /** Set at the third pause: ask the synthesizer for a plan, then call `recordPlan`. */
  readonly dispatch: LoopEvent | null;
  /** Set at the fourth pause: the sealed stop of this conflict line; on a line already stopped, the terminal guard's. */
  readonly stop: LoopEvent | null;
}

function pauseEvent(data: LoopPolicyData, p: PauseInput): LoopEventInput {
  return {
    event_id: p.pauseId,
    timestamp: p.timestamp,
    session_id: data.session_id,
    run_id: p.runId,
    layer: 'acc_gate',
    decision: 'PAUSE_FOR_HITL',
    kind: 'K_HITL_PAUSE',
    reason_code: p.reasonCode,
    conflict_fingerprint: p.fingerprint,
    sealed: false,
    overrideable: true,
    final_decider: 'SYSTEM',
    payload: null,
  };
}

/**
 * Counts one HITL pause (its pause id dedupes replays) and runs what the thresholds trigger. A pause on
 * a conflict line already stopped is not counted: the terminal guard answers it with its sealed stop
 * (a run that was under way when another run stopped its line).
 */
export function recordPause(data: LoopPolicyData, p: PauseInput): PauseOutcome {
  const counter = HitlCounter.fromSnapshot(data.counter);
  const state = SessionState.fromSnapshot(data.state);
  const guard = enforceTerminalGuard(state, pauseEvent(data, p), SCOPE);
  if (guard) return { data, count: counter.countFor(data.session_id, p.fingerprint), events: [guard], dispatch: null, stop: guard };
  const { count, planRequested, endRecommended } = counter.maybeIncrementAndEmit(pauseEvent(data, p));
  const events: LoopEvent[] = [];
  let dispatch: LoopEvent | null = null;
  if (planRequested) {
    events.push(planRequested);
    dispatch = maestroDispatchPlanRequest(state, planRequested);
    if (dispatch) events.push(dispatch);
  }
  let stop: LoopEvent | null = null;
  if (endRecommended) {
    events.push(endRecommended);
    stop = maestroMaybeStop(state, endRecommended, SCOPE);
    if (stop) events.push(stop);
  }
  return {
    data: { ...data, counter: counter.toSnapshot(), state: state.toSnapshot() },
    count,
    events,
    dispatch: dispatch?.kind === 'K_PLAN_REQ_DISPATCH' ? dispatch : null,
    stop: stop?.decision === 'STOPPED' ? stop : null,
  };
}

/** Records the plan the synthesizer proposed for a dispatched request (propose, then acknowledge; each once). */
export function recordPlan(data: LoopPolicyData, dispatch: LoopEvent, plan: string): { data: LoopPolicyData; events: LoopEvent[] } {
  const state = SessionState.fromSnapshot(data.state);
  const events: LoopEvent[] = [];
  const proposed = mediationProposePlan(state, dispatch, plan);
  if (proposed) {
    events.push(proposed);
    const received = maestroAckPlanReceived(state, proposed);
    if (received) events.push(received);
  }
  return { data: { ...data, state: state.toSnapshot() }, events };
}

/** Whether this conflict line was stopped (the conflict-scoped terminal guard). */
export function isConflictStopped(data: LoopPolicyData, fingerprint: string): boolean {
  return data.state.stopped_keys.includes(conflictKeyOf({ session_id: data.session_id, conflict_fingerprint: fingerprint }));
}

/** HITL pauses counted so far for this conflict in the current session. */
export function pausesFor(data: LoopPolicyData, fingerprint: string): number {
  const key = conflictKeyOf({ session_id: data.session_id, conflict_fingerprint: fingerprint });
  return data.counter.counts.find((c) => c.conflict_key === key)?.count ?? 0;
}

/** `maestro session reset`: the explicit new session start runs both resets together, then a new session begins. */
export function resetLoopPolicy(data: LoopPolicyData, newSessionId: string, now: string): LoopPolicyData {
  const counter = HitlCounter.fromSnapshot(data.counter);
  counter.resetIfAllowed(data.session_id, '', '', 'explicit_new_session_start');
  // maestro's state starts anew with the session (what `maestroResetSessionStateOnNewSession` does to a kept one).
  return {
    ...data,
    session_id: newSessionId,
    started_at: now,
    counter: counter.toSnapshot(),
    state: new SessionState(newSessionId).toSnapshot(),
  };
}
