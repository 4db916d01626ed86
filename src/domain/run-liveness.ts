import { RunStatus } from './run-state.js';
import { isResumableFailure, type RunLife } from './run/transitions.js';

/**
 * A run's status as people read it. A checkpoint says `running` from the run's start until it
 * pauses or ends; when the process that ran it was killed (`kill -9`, a power cut) nothing ever
 * changes that, so readers derive the status instead of trusting it: `running` only while a live
 * process holds the run, `interrupted` otherwise. Nothing is written back: resuming is the fix.
 */
export const SHOWN_RUN_STATUSES = [...RunStatus.options, 'interrupted', 'continued', 'unknown', 'unreadable'] as const;

/**
 * The status to show for a checkpoint's status, given whether a live process holds the run now and
 * whether a person's `continue` waits for it: `continued` (nothing went wrong: it waits to be resumed),
 * else `interrupted` (the process that ran it is gone).
 */
export function shownStatus(stored: string, held: boolean, continued = false): string {
  if (stored !== 'running' || held) return stored;
  return continued ? 'continued' : 'interrupted';
}

/**
 * The command that moves a live run on from the status shown (isLiveRun): an interrupted run and one a
 * storage failure ended resume, a paused one is decided; null for a run being run or one that has ended.
 */
export function nextStep(run: RunLife & { readonly run_id: string }, shown: string): string | null {
  if (shown === 'interrupted' || shown === 'continued' || isResumableFailure(run)) return `maestro run --resume ${run.run_id}`;
  return shown === 'paused' ? `maestro hitl decide ${run.run_id} continue|stop` : null;
}
