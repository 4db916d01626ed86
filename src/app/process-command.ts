import { settleOutside, settleRun } from './settle-run.js';
import { failureEnding } from './failure-ending.js';
import { decideRun } from '../domain/run/policy.js';
import { canDecide, canResume, isResumableFailure, STORAGE_WRITE_FAILED } from '../domain/run/transitions.js';
import { auditEvent } from '../domain/audit.js';
import { parseCommandText, type CommandFile } from '../domain/command-file.js';
import { runDecision } from '../domain/decision.js';
import { AppError, StorageError } from '../domain/errors.js';
import { unrecordedSteps } from '../domain/run/commit.js';
import { RUN_STATE_VERSION, type RunState } from '../domain/run-state.js';
import { RAW_COMMAND_FILE, screenCommand } from '../domain/screen.js';
import { executeRun } from './execute-run.js';
import { stepRecords } from './run-records.js';
import { startedRun, type RunDeps, type RunOutcome } from './run-deps.js';

export interface CommandInput {
  /** The command file's text, exactly as read. */
  readonly text: string;
  /** Where it came from (a file name), for status and the audit trail. */
  readonly source: string;
  /** Use this run id (the watcher claims a file under its run id); default: a new one. */
  readonly runId?: string;
}

/**
 * The one use case behind `maestro run` and `maestro watch`: validate a command, pass the gates,
 * deliberate, arbitrate, and write the artifact, the session states and the audit trail.
 */
export async function processCommand(input: CommandInput, deps: RunDeps): Promise<RunOutcome> {
  const runId = input.runId ?? deps.newRunId();
  return holding(runId, deps, () => endOnFailure(runId, deps, () => startRun(runId, input, deps)));
}

/**
 * How long a process waits for another one to let go of a run (a person deciding its pause, a run
 * about to pause) before it is refused. A process that would run it is refused at once by another
 * one running it (see `RunHolds.hold`): that lasts as long as the run.
 */
export const HOLD_WAIT_MS = 3_000;

/**
 * Runs `body` while this process holds the run (`deps.holds`), from before its first checkpoint
 * until its journal is folded: a reader then tells it from a run a killed process left `running`.
 * A run a live process still holds after HOLD_WAIT_MS is refused (`RunHeldError`) before anything
 * is written. Without `deps.holds` the caller holds the run already (`run --resume`), or a claim's
 * lease does (an engine worker).
 */
async function holding(runId: string, deps: RunDeps, body: () => Promise<RunOutcome>): Promise<RunOutcome> {
  const hold = await deps.holds?.hold(runId, { waitMs: HOLD_WAIT_MS, span: 'run' });
  try {
    return await body();
  } finally {
    // Letting go is tidying: a holder file left behind names a process that is gone, which reads as not held.
    await hold?.release().catch(() => undefined);
  }
}

async function startRun(runId: string, input: CommandInput, deps: RunDeps): Promise<RunOutcome> {
  const run = await deps.ledger.open(runId);
  try {
    const received = auditEvent('COMMAND_RECEIVED', runDecision('queue', 'COMMAND_RECEIVED'), {
      bytes: Buffer.byteLength(input.text),
      sha256: deps.sha256(input.text),
    });
    // The record that the command was received goes with the run's first commit (its first state, or
    // its refusal): one flush before the first call instead of two. A log from before that (a claim
    // recovered after a crash between the two) already says it, and says it once.
    const receivedFirst = run.hasRecorded('COMMAND_RECEIVED') ? [] : [received];
    const parsed = parseCommandText(input.text);
    if (!parsed.ok) {
      const missing = parsed.issues.some((i) => i.startsWith('task_description:') && /required/.test(i));
      const paths = parsed.issues.map((i) => i.split(':')[0] ?? '');
      return await settleRun({
        run,
        deps,
        ending: decideRun({ kind: 'refused', reason: missing ? 'SPEC_MISSING_KEYS' : 'SPEC_INVALID_INPUT' }),
        message: `${input.source} is not a valid command file`,
        event: 'COMMAND_INVALID',
        details: { issue_count: parsed.issues.length, issue_paths: paths },
        before: receivedFirst,
        problems: parsed.issues,
      });
    }
    const now = deps.clock.now().toISOString();
    // The checkpoint keeps the command screened; the command as given waits beside it while the run may go on.
    const kept = screenCommand(parsed.value);
    const state: RunState = {
      schemaVersion: RUN_STATE_VERSION,
      run_id: runId,
      status: 'running',
      created_at: now,
      updated_at: now,
      source: input.source,
      task_sha256: deps.sha256(parsed.value.task_description),
      command: kept.command,
      ...(kept.categories.length > 0 ? { command_redacted: kept.categories } : {}),
      steps: [],
      trail: [],
      reroutes: [],
      hitl: [],
    };
    const valid = auditEvent('COMMAND_VALID', runDecision('validation', 'SPEC_OK'), {
      task_sha256: state.task_sha256,
      task_chars: parsed.value.task_description.length,
      input_artifacts: parsed.value.input_artifacts.length,
    });
    // The run's first state, the command as given beside it, and the record that it was accepted: one commit.
    await run.commit({ start: state, files: [{ name: RAW_COMMAND_FILE, content: input.text }], records: [...receivedFirst, valid] });
    return await executeRun(startedRun(run), deps, parsed.value);
  } finally {
    // However the run stopped here (ended, paused, interrupted, failed), this process lets it go.
    await run.close();
  }
}

/**
 * Resumes a run from its checkpoint (after a crash or an interruption); finished model calls are not
 * repeated. Refused while a live process holds the run.
 */
export async function resumeRun(runId: string, deps: RunDeps): Promise<RunOutcome> {
  // An unknown id is refused as such before anything is held for it.
  if (deps.holds && !(await deps.ledger.load(runId))) throw new RunNotResumableError(`there is no run "${runId}" in this workspace`);
  return holding(runId, deps, () => resumeHeld(runId, deps));
}

/** The resume itself, under the hold: the checkpoint is read again, as it may have moved on meanwhile. */
async function resumeHeld(runId: string, deps: RunDeps): Promise<RunOutcome> {
  const state = await deps.ledger.load(runId);
  if (!state) throw new RunNotResumableError(`there is no run "${runId}" in this workspace`);
  if (canDecide(state.status)) {
    throw new RunNotResumableError(
      `run ${runId} is paused for a person (${state.pause?.reason_code ?? 'see maestro hitl show'}); decide first: maestro hitl decide ${runId} continue|stop`,
    );
  }
  // A run a storage failure ended is taken up again from its checkpoint (no finished call repeated).
  const storageFailed = isResumableFailure(state);
  if (!canResume(state)) throw new RunNotResumableError(`run ${runId} has already ended (${state.status})`);
  const command = await givenCommand(state, deps);
  return endOnFailure(runId, deps, async () => {
    const run = startedRun(await deps.ledger.open(runId));
    try {
      // Steps the checkpoint holds that the log does not name (a crash between the two, where they are
      // not one write) are recorded now, right after the resume, and never called again.
      const unrecorded = unrecordedSteps(run.state.steps, run.recordedSteps(), run.hasRecorded('MODEL_CALL'));
      const by = deps.resumedBy;
      const resumed = auditEvent('RUN_RESUMED', runDecision('queue', 'RUN_RESUMED_FROM_CHECKPOINT'), {
        completed_steps: run.state.steps.length,
        ...(by ? { resumed_by: by.name, via: by.via, from: by.from } : {}),
      });
      await run.commit({
        ...(storageFailed ? { event: { type: 'revived' } } : {}),
        records: [resumed, ...unrecorded.flatMap((s) => stepRecords(s, deps))],
      });
      return await executeRun(run, deps, command);
    } finally {
      await run.close();
    }
  });
}

/**
 * The command a run was given, to go on with: its copy beside the checkpoint (when it is the one
 * the checkpoint's task digest names), else the checkpoint's own when nothing was redacted from it,
 * or when the run is only completing an ending it already fixed (no model is called, and what it
 * writes is screened). Otherwise the run cannot go on as it was given: refused, never guessed.
 */
async function givenCommand(state: RunState, deps: RunDeps): Promise<CommandFile> {
  const text = await deps.ledger.readFile(state.run_id, RAW_COMMAND_FILE);
  const parsed = text === undefined ? undefined : parseCommandText(text);
  if (parsed?.ok && deps.sha256(parsed.value.task_description) === state.task_sha256) return parsed.value;
  const redacted = state.command_redacted ?? [];
  if (redacted.length === 0 || state.finishing) return state.command;
  const copy = text === undefined ? 'gone' : 'not the one the run started with';
  throw new RunNotResumableError(
    `run ${state.run_id} cannot go on as it was given: its checkpoint keeps the command screened (${redacted.join(', ')} redacted) ` +
      `and the command itself (${RAW_COMMAND_FILE} beside it) is ${copy}; run the command again`,
  );
}

/**
 * A failure ends the run as its row of the policy table says, through the one applier: a failed
 * write (a full disk, EIO) loudly, never as completed — `error`, STORAGE_WRITE_FAILED, the path and
 * the errno, resumable once there is room — and anything else (a bug) as `error` on its record, so no
 * run is left `running` with nobody running it; the bug itself goes on to the caller. What was kept
 * before stays as it was: every kept file is replaced whole or not at all.
 */
async function endOnFailure(runId: string, deps: RunDeps, body: () => Promise<RunOutcome>): Promise<RunOutcome> {
  try {
    return await body();
  } catch (error) {
    if (deps.signal?.aborted) throw error;
    const outcome = await settleOutside(runId, deps, failureEnding(error, { runId }));
    if (error instanceof StorageError) return outcome;
    throw error;
  }
}

export { STORAGE_WRITE_FAILED };

/** The run cannot be resumed (unknown, paused without a decision, or already ended). */
export class RunNotResumableError extends AppError {
  readonly code = 'RUN_NOT_RESUMABLE' as const;
}

export type { CommandFile };
