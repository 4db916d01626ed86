import { RunStatus } from './run-state.js';

/**
 * A run's status as people read it. A checkpoint says `running` from the run's start until it
 * pauses or ends; when the process that ran it was killed (`kill -9`, a power cut) nothing ever
 * changes that, so readers derive the status instead of trusting it: `running` only while a live
 * process holds the run, `interrupted` otherwise. Nothing is written back: resuming is the fix.
 */
export const SHOWN_RUN_STATUSES = [...RunStatus.options, 'interrupted', 'unknown'] as const;
export type ShownRunStatus = (typeof SHOWN_RUN_STATUSES)[number];

/** The status to show for a checkpoint's status, given whether a live process holds the run now. */
export function shownStatus(stored: string, held: boolean): string {
  return stored === 'running' && !held ? 'interrupted' : stored;
}

/** What a person does next about a run in each status that needs one (the others are done, or being done). */
const NEXT_STEP: Readonly<Partial<Record<string, (runId: string) => string>>> = {
  interrupted: (runId) => `maestro run --resume ${runId}`,
  paused: (runId) => `maestro hitl decide ${runId} continue|stop`,
};

/** The command that moves a run on from the status shown, or null when there is nothing to do. */
export function nextStep(runId: string, shown: string): string | null {
  return NEXT_STEP[shown]?.(runId) ?? null;
}
