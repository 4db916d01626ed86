import type { RunStatus } from '../run-state.js';

/** The kinds of event that change a run (run-machine.ts's `RunEvent`, which is checked against this list). */
export const RUN_EVENT_TYPES = [
  'planned',
  'advised',
  'step_recorded',
  'plan_asked',
  'rerouted',
  'decided',
  'paused',
  'person_decided',
  'finishing',
  'finished',
  'failed',
  'revived',
] as const;
export type RunEventType = (typeof RUN_EVENT_TYPES)[number];

/**
 * What can happen to a run in each status: the run's life cycle as a table. `applyRunEvent` refuses
 * an event the table does not allow for the run's status (a bug, never a user's mistake: callers
 * check the predicates below first), so no code path can move a run the way nobody decided.
 */
export const TRANSITIONS: Readonly<Record<RunStatus, readonly RunEventType[]>> = {
  // Executing: every step of a run, and every way out of it (only a storage failure is revived).
  running: RUN_EVENT_TYPES.filter((t) => t !== 'revived'),
  // Waiting for a person: a decision, then (stop) the ending it fixes; a storage failure on the way.
  paused: ['person_decided', 'finishing', 'finished', 'failed'],
  // A storage failure: taken up again, or failed again while recording it.
  error: ['revived', 'failed'],
  // Ended: nothing moves an ended run. A fixed ending completed after a crash is still `running`.
  completed: [],
  stopped: [],
  guardrail_stopped: [],
  invalid: [],
};

/** Whether the table allows `event` on a run in `status`. */
export function allows(status: RunStatus, event: RunEventType): boolean {
  return TRANSITIONS[status].includes(event);
}

/** Reason code of a run ended by a storage failure (a full disk, EIO): the one failure a run is taken up again from. */
export const STORAGE_WRITE_FAILED = 'STORAGE_WRITE_FAILED';

/** What the life of a run is told from: its status, and for a failed run why it failed. */
export type RunLife = { readonly status: string; readonly decision?: { readonly reason_code?: string } | undefined };

/** A run a storage failure ended: `maestro run --resume` takes it up again from its checkpoint. */
export function isResumableFailure(run: RunLife): boolean {
  return run.status === 'error' && run.decision?.reason_code === STORAGE_WRITE_FAILED;
}

/**
 * The one definition of a live run: it may still go on — executing (or interrupted, which resuming
 * fixes), waiting for a person, or ended by a storage failure (resumable). Every other run has ended:
 * its artifact (if any) and its audit log are final, and nothing reads it again for a change.
 */
export function isLiveRun(run: RunLife): boolean {
  return run.status === 'running' || run.status === 'paused' || isResumableFailure(run);
}

/** A person may decide a run only while it waits for one. */
export function canDecide(status: RunStatus): boolean {
  return status === 'paused';
}

/** A run may be resumed from its checkpoint while executing was cut short (interrupted), or after a storage failure. */
export function canResume(run: RunLife): boolean {
  return run.status === 'running' || isResumableFailure(run);
}
