import { CheckpointUnreadableError } from './errors.js';
import { screenText } from './screen.js';

/**
 * A run whose checkpoint is there but cannot be read. It may be paused for a person, so every list
 * of runs (`hitl list`, `status`, `runs`, the console, `hitl decide --all`) names it rather than
 * leaving it out: the file is left as it is, for a person to look at.
 */
export interface UnreadableCheckpoint {
  readonly run_id: string;
  /** Why, in a few words: `not valid JSON`, `empty`, `schema: …`, `damaged at line 3: …`. */
  readonly problem: string;
  /** The command that shows the whole error. */
  readonly look: string;
}

/** The run `runId` whose checkpoint `error` would not let be read. */
export function unreadableCheckpoint(runId: string, error: unknown): UnreadableCheckpoint {
  const problem = error instanceof CheckpointUnreadableError ? error.problem : error instanceof Error ? error.message : String(error);
  return { run_id: runId, problem: screenText(problem), look: `maestro hitl show ${runId}` };
}

/** One sentence for a list: which run, why, and how to look. */
export function unreadableSentence(u: UnreadableCheckpoint): string {
  return `run ${u.run_id}'s checkpoint cannot be read (${u.problem}): it may be waiting for a person; look with: ${u.look}`;
}
