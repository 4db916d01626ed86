import type { PauseRecord, RunState } from './run-state.js';

/** What the caller found out about a run that is `running` with no pause (asked under the run's lock). */
export interface RunningFacts {
  /** A `continue` decided on it waits for its resumer (a watcher, or `maestro run --resume`). */
  readonly continuePending: boolean;
  /** A live process runs it now (a watcher's claim, an engine worker). */
  readonly owned: boolean;
}

export type PauseToDecide = { readonly ok: true; readonly pause: PauseRecord } | { readonly ok: false; readonly refusal: string };

/**
 * The pause a person's decision applies to, or why it applies to none (nothing may change then).
 * A decision applies only to a pause that is open: a pause already decided — by another process a
 * moment ago, or by this person earlier — is refused, saying so. One exception: a run left `running`
 * that no live process runs and no `continue` is waiting to resume can be stopped (no path leaves a
 * run that nobody can end); that stop gets a pause of its own, RUN_NOT_OWNED.
 */
export function pauseToDecide(state: RunState, input: { readonly decision: 'continue' | 'stop'; readonly pauseId?: string }, facts: RunningFacts, now: string): PauseToDecide {
  if (state.decision?.sealed) {
    return refuse(`run ${state.run_id} was stopped by a sealed decision (${state.decision.layer}: ${state.decision.reason_code}); nobody can continue it`);
  }
  const open = state.status === 'paused' ? state.pause : undefined;
  if (open) {
    if (input.pauseId === undefined || input.pauseId === open.pause_id) return { ok: true, pause: open };
    return refuse(`the decision is for pause ${input.pauseId}, but the current pause of run ${state.run_id} is ${open.pause_id}${decidedText(state, input.pauseId)}; nothing changed`);
  }
  const abandoned = state.status === 'running' && !facts.continuePending && !facts.owned;
  if (input.decision === 'stop' && input.pauseId === undefined && abandoned) {
    return { ok: true, pause: notOwnedPause(state, now) };
  }
  if (input.pauseId !== undefined && !state.hitl.some((h) => h.pause_id === input.pauseId)) {
    return refuse(`the decision is for pause ${input.pauseId}, but run ${state.run_id} has no open pause (it is ${state.status}); nothing changed`);
  }
  const last = input.pauseId === undefined ? state.hitl.at(-1) : state.hitl.findLast((h) => h.pause_id === input.pauseId);
  const decided = last ? `; its pause ${last.pause_id} was already decided ("${last.decision}" at ${last.decided_at})` : '';
  const waiting = facts.continuePending ? ` and the run waits to be resumed (by a running maestro watch, or: maestro run --resume ${state.run_id})` : '';
  return refuse(`run ${state.run_id} is not paused: it is ${state.status}${decided}${waiting}; nothing changed`);
}

function refuse(refusal: string): PauseToDecide {
  return { ok: false, refusal };
}

/** `, and pause P was already decided (…)` when it was, for a refusal that names an old pause. */
function decidedText(state: RunState, pauseId: string): string {
  const earlier = state.hitl.findLast((h) => h.pause_id === pauseId);
  return earlier ? ` (pause ${pauseId} was already decided: "${earlier.decision}" at ${earlier.decided_at})` : '';
}

function notOwnedPause(state: RunState, now: string): PauseRecord {
  return {
    pause_id: `${state.run_id}-p${state.hitl.length + 1}`,
    layer: 'queue',
    reason_code: 'RUN_NOT_OWNED',
    message: 'the run was left running with nobody running it',
    requested_at: now,
  };
}
