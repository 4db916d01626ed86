import type { AuditEvent } from '../audit.js';
import { InternalError } from '../errors.js';
import type { RunCommit, RunFile, RunFileName } from '../ports.js';
import { applyRunEvent, type RunEvent } from '../run-machine.js';
import type { RunState, Step } from '../run-state.js';

/** A commit as a ledger writes it: everything decided, nothing written yet. */
export interface ResolvedCommit {
  readonly runId: string;
  /** The state before the commit (undefined for a run that had none). */
  readonly before: RunState | undefined;
  /** The state after it: `before` itself when the commit changes no state. */
  readonly after: RunState | undefined;
  /** Whether the state changes: `start`, or an event applied to `before`. */
  readonly changesState: boolean;
  readonly event?: RunEvent;
  /** When the event was applied (ISO time), as `applyRunEvent` stamps it. */
  readonly at: string;
  readonly records: readonly AuditEvent[];
  readonly files: readonly RunFile[];
  readonly removeFiles: readonly RunFileName[];
}

/**
 * What one commit does, decided before anything is written — the one place where the rules of a
 * commit live, for every ledger (files, PostgreSQL, the tests' in-memory one):
 * - a run starts once: `start` only on a run with no state;
 * - an event needs a state, and only `applyRunEvent` applies it;
 * - records are made from the state after the change; if making them throws, nothing changed;
 * - an ending completed after a restart does not repeat what the log already holds (`completesEnding`).
 * Throws an InternalError for a commit that breaks them (a bug in the caller).
 */
export function resolveCommit(options: {
  runId: string;
  state: RunState | undefined;
  change: RunCommit;
  at: string;
  hasRecorded: (event: string) => boolean;
}): ResolvedCommit {
  const { runId, change, at } = options;
  const before = options.state;
  if (change.start && before) throw new InternalError(`run ${runId} already has a state: it cannot start again`);
  if (change.start && change.start.run_id !== runId)
    throw new InternalError(`a state of run ${change.start.run_id} was committed to run ${runId}`);
  const base = change.start ?? before;
  if (change.event && !base) throw new InternalError(`an event (${change.event.type}) was committed to run ${runId}, which has no state`);
  const after = change.event && base ? applyRunEvent(base, change.event, at) : base;
  if (typeof change.records === 'function' && !after)
    throw new InternalError(`records of run ${runId} were made from a state it does not have`);
  const made = typeof change.records === 'function' ? change.records(after as RunState) : (change.records ?? []);
  const records = change.completesEnding ? made.filter((r) => !options.hasRecorded(r.event)) : [...made];
  return {
    runId,
    before,
    after,
    changesState: change.start !== undefined || change.event !== undefined,
    ...(change.event ? { event: change.event } : {}),
    at,
    records,
    files: change.files ?? [],
    removeFiles: change.removeFiles ?? [],
  };
}

/**
 * The steps a checkpoint holds that the log does not name: where a step and its records are not one
 * write, a crash between them leaves the last steps unrecorded; a resume records them (it never calls
 * them again). Only steps after the last one the log names are candidates, so a log from before
 * MODEL_CALL records named their step is left as it is.
 */
export function unrecordedSteps(steps: readonly Step[], recorded: ReadonlySet<string>, logHasModelCalls: boolean): Step[] {
  let last = -1;
  steps.forEach((s, i) => {
    if (recorded.has(s.id)) last = i;
  });
  if (last === -1 && logHasModelCalls) return [];
  return steps.slice(last + 1).filter((s) => !recorded.has(s.id));
}
