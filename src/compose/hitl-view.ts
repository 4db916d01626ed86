import { describeContinue } from '../app/hitl.js';
import { conflictFingerprint } from '../app/loop-policy.js';
import { showRun } from '../adapters/fs/run-liveness.js';
import type { App } from './app.js';
import type { Backend } from './backend.js';
import { isConflictStopped, pausesFor } from '../domain/loop-policy/workspace-loop.js';
import { openPause } from '../domain/hitl-decision.js';
import type { RunState } from '../domain/run-state.js';
import { screenText, taskLine } from '../domain/screen.js';
import { type UnreadableCheckpoint, unreadableCheckpoint } from '../domain/unreadable-checkpoint.js';

// What `maestro hitl list` and `hitl show` (and the console's decisions) tell of paused runs.

/** One paused run as `hitl list` shows it. */
export interface PausedRow {
  run_id: string;
  pause_id: string;
  age_seconds: number;
  layer: string;
  reason_code: string;
  /** The command file it came from, and its task's first line (screened). */
  source: string;
  task: string;
  task_digest: string;
  conflict_pauses: number;
  /** Its conflict line was ended by the loop policy (sealed): `continue` would only stop it. */
  conflict_stopped: boolean;
}

/** What `hitl list` shows (also its `--json` shape): the paused runs, and the runs whose checkpoint cannot be read. */
export interface PausedList {
  readonly paused: PausedRow[];
  /** Runs whose checkpoint is there but does not read: any of them may wait for a person (never left out unsaid). */
  readonly unreadable_checkpoints: UnreadableCheckpoint[];
}

/** The workspace's paused runs, in the ledger's order, and apart the runs whose checkpoint does not read. */
export async function pausedRuns(app: App): Promise<PausedList> {
  const loop = await app.deps.loopPolicy.read();
  const now = app.deps.clock.now().getTime();
  const rows = [];
  const unreadable: UnreadableCheckpoint[] = [];
  for (const id of await app.deps.ledger.list()) {
    let state: RunState | undefined;
    try {
      state = await app.deps.ledger.load(id);
    } catch (error) {
      unreadable.push(unreadableCheckpoint(id, error));
      continue;
    }
    if (state?.status !== 'paused' || !state.pause) continue;
    const line = conflictFingerprint(state, app.deps.sha256);
    rows.push({
      run_id: state.run_id,
      pause_id: state.pause.pause_id,
      age_seconds: Math.round((now - Date.parse(state.pause.requested_at)) / 1000),
      layer: state.pause.layer,
      reason_code: state.pause.reason_code,
      source: screenText(state.source),
      task: taskLine(state.command.task_description, 60),
      task_digest: state.task_sha256.slice(0, 12),
      conflict_pauses: pausesFor(loop, line),
      conflict_stopped: isConflictStopped(loop, line),
    });
  }
  return { paused: rows, unreadable_checkpoints: unreadable };
}

/**
 * What `hitl show` tells of a run: its pause while it is open (a decided or ended one is history, never
 * offered again), what continue would do, the plan and draft, the decisions so far and who took them.
 */
export async function showDetails(options: { app: App; backend: Backend; runId: string; state: RunState }): Promise<ShowDetails> {
  const { app, state } = options;
  const hitlText = await app.deps.ledger.readFile(options.runId, 'hitl.json').catch(() => undefined);
  const hitlFile = readJsonObject(hitlText);
  const loop = await app.deps.loopPolicy.read();
  const line = conflictFingerprint(state, app.deps.sha256);
  // A conflict line the loop policy ended (sealed): continuing would only stop the run, so it is not offered.
  const lineStopped = isConflictStopped(loop, line);
  // Its pause while it is open: a decided or ended one is history, never offered again.
  const pause = openPause(state);
  const shown = await showRun(state, options.backend);
  return {
    run_id: state.run_id,
    status: shown.status,
    ...(shown.requeued ? { requeued: shown.requeued } : {}),
    // The task as the checkpoint keeps it (screened), and what was taken out of it: categories, never values.
    task: state.command.task_description,
    redacted: state.command_redacted ?? [],
    pause: pause ?? null,
    continue_would: !pause ? null : lineStopped ? LINE_STOPPED : describeContinue(pause.layer, pause.reason_code),
    resumes_on_its_own: pause?.outage ? resumesOnItsOwn(pause.outage.route, app.deps.config.resume_after_outage) : null,
    conflict_stopped: lineStopped,
    plan: pause ? (state.loop_plan ?? null) : null,
    draft: pause ? ((hitlFile.draft as string | null | undefined) ?? null) : null,
    conflict_pauses: pausesFor(loop, line),
    decisions: state.hitl,
    sealed: state.decision?.sealed ?? false,
  };
}

export interface ShowDetails {
  run_id: string;
  status: string;
  /** Interrupted, and queued again in the engine: the next free worker resumes it (absent otherwise). */
  requeued?: true;
  task: string;
  redacted: string[];
  /** The pause a person may decide now; null when there is none (not paused, or its pause was decided). */
  pause: RunState['pause'] | null;
  /** What `continue` would do, as the words after "Continue would" (a verb phrase). */
  continue_would: string | null;
  /** An outage's pause: that it resumes on its own once its route answers again (or why it waits for a person). */
  resumes_on_its_own: string | null;
  /** The conflict line is stopped (sealed): only `stop` is offered. */
  conflict_stopped: boolean;
  plan: string | null;
  draft: string | null;
  conflict_pauses: number;
  decisions: RunState['hitl'];
  sealed: boolean;
}

const LINE_STOPPED =
  'not go on: this conflict line was ended by the loop policy (sealed, ACC_STOPPED_IS_TERMINAL), so the run would be stopped at once. Stop it; to work on the conflict again, start a new session (maestro session reset --keep-memory) and run the command again';

/** What an outage's pause does by itself. */
function resumesOnItsOwn(route: string, resumeAfterOutage: boolean): string {
  return resumeAfterOutage
    ? `this pause resumes by itself once route "${route}" answers again (a running maestro watch probes it; resume_after_outage); no decision is needed`
    : `this pause waits for a person even once route "${route}" answers again (resume_after_outage is false)`;
}

/** A kept JSON file as an object; nothing when it is missing or does not read (it only adds details). */
function readJsonObject(text: string | undefined): Record<string, unknown> {
  try {
    const json = text === undefined ? undefined : (JSON.parse(text) as unknown);
    return json !== null && typeof json === 'object' ? (json as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
