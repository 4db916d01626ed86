import type { PauseRecord, RunState } from './run-state.js';
import { canDecide } from './run/transitions.js';

/** What the caller found out about a run that is `running` with no pause (asked under the run's lock). */
export interface RunningFacts {
  /** A `continue` decided on it waits for its resumer (a watcher, or `maestro run --resume`). */
  readonly continuePending: boolean;
  /** A live process runs it now (a watcher's claim, an engine worker). */
  readonly owned: boolean;
}

/** The decision asked for: which, and optionally the pause it is bound to (`--pause`). */
export interface DecisionAsked {
  readonly decision: 'continue' | 'stop';
  readonly pauseId?: string;
}

export type PauseToDecide = { readonly ok: true; readonly pause: PauseRecord } | { readonly ok: false; readonly refusal: string };

/**
 * The pause a person's decision applies to, or why it applies to none (nothing may change then).
 * A decision applies only to a pause that is open: a pause already decided — by another process a
 * moment ago, or by this person earlier — is refused, saying so. One exception: a run left `running`
 * that no live process runs and no `continue` is waiting to resume can be stopped (no path leaves a
 * run that nobody can end); that stop gets a pause of its own, RUN_NOT_OWNED.
 */
export function pauseToDecide(state: RunState, input: DecisionAsked, facts: RunningFacts, now: string): PauseToDecide {
  const id = state.run_id;
  if (state.decision?.sealed) {
    const { layer, reason_code } = state.decision;
    return refuse(`run ${id} was stopped by a sealed decision (${layer}: ${reason_code}); nobody can continue it`);
  }
  const open = canDecide(state.status) ? state.pause : undefined;
  if (open) {
    if (input.pauseId === undefined || input.pauseId === open.pause_id) return { ok: true, pause: open };
    const current = `the current pause of run ${id} is ${open.pause_id}${decidedText(state, input.pauseId)}`;
    return refuse(`the decision is for pause ${input.pauseId}, but ${current}; nothing changed`);
  }
  const abandoned = state.status === 'running' && !facts.continuePending && !facts.owned;
  if (input.decision === 'stop' && input.pauseId === undefined && abandoned) {
    return { ok: true, pause: notOwnedPause(state, now) };
  }
  if (input.pauseId !== undefined && !state.hitl.some((h) => h.pause_id === input.pauseId)) {
    return refuse(`the decision is for pause ${input.pauseId}, but run ${id} has no open pause (it is ${state.status}); nothing changed`);
  }
  const last = input.pauseId === undefined ? state.hitl.at(-1) : state.hitl.findLast((h) => h.pause_id === input.pauseId);
  const decided = last ? `; its pause ${last.pause_id} was already decided ("${last.decision}" at ${last.decided_at})` : '';
  const resumer = `by a running maestro watch (with an engine, by a free worker), or: maestro run --resume ${id}`;
  const waiting = facts.continuePending ? ` and the run waits to be resumed (${resumer})` : '';
  return refuse(`run ${id} is not paused: it is ${state.status}${decided}${waiting}; nothing changed`);
}

/**
 * The pause a person may decide now, or undefined: the run waits for a person and its pause has not
 * been decided (a stop being carried out, or a run that ended, offers nothing). Every page and
 * listing that offers a decision asks this.
 */
export function openPause(state: Pick<RunState, 'status' | 'pause' | 'hitl'>): PauseRecord | undefined {
  const pause = canDecide(state.status) ? state.pause : undefined;
  return pause && !state.hitl.some((h) => h.pause_id === pause.pause_id) ? pause : undefined;
}

function refuse(refusal: string): PauseToDecide {
  return { ok: false, refusal };
}

/** ` (pause P was already decided: …)` when it was, for a refusal that names an old pause. */
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
