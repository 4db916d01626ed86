import { failureReason } from '../domain/codes.js';
import { settleFailure } from './settle-run.js';
import { canDecide, canResume, isResumableFailure, STORAGE_WRITE_FAILED } from '../domain/run/transitions.js';
import { auditEvent, type AuditEvent } from '../domain/audit.js';
import { parseCommandText, type CommandFile } from '../domain/command-file.js';
import { failClosedDecision, systemStopDecision, type DecisionRecord } from '../domain/decision.js';
import { AppError, StorageError } from '../domain/errors.js';
import type { OpenRun } from '../domain/ports.js';
import { unrecordedSteps } from '../domain/run/commit.js';
import { RUN_STATE_VERSION, type RunState } from '../domain/run-state.js';
import { RAW_COMMAND_FILE, screenCommand } from '../domain/screen.js';
import { executeRun } from './execute-run.js';
import { buildOutcome } from '../domain/run-machine.js';
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
  return holding(runId, deps, () => endOnStorageFailure(runId, deps, () => startRun(runId, input, deps)));
}

/**
 * Runs `body` while this process holds the run (`deps.holds`), from before its first checkpoint
 * until its journal is folded: a reader then tells it from a run a killed process left `running`.
 * A run a live process already holds is refused (`RunHeldError`) before anything is written.
 */
async function holding(runId: string, deps: RunDeps, body: () => Promise<RunOutcome>): Promise<RunOutcome> {
  const hold = await deps.holds?.hold(runId);
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
    const received = auditEvent('COMMAND_RECEIVED', systemRun('queue', 'COMMAND_RECEIVED'), {
      bytes: Buffer.byteLength(input.text),
      sha256: deps.sha256(input.text),
    });
    // The record that the command was received goes with the run's first commit (its first state, or
    // its refusal): one flush before the first call instead of two. A log from before that (a claim
    // recovered after a crash between the two) already says it, and says it once.
    const receivedFirst = run.hasRecorded('COMMAND_RECEIVED') ? [] : [received];
    const parsed = parseCommandText(input.text);
    if (!parsed.ok) return await rejectInvalid(run, parsed.issues, input.source, receivedFirst);
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
    const valid = auditEvent('COMMAND_VALID', systemRun('validation', 'SPEC_OK'), {
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
  return endOnStorageFailure(runId, deps, async () => {
    const run = startedRun(await deps.ledger.open(runId));
    try {
      // Steps the checkpoint holds that the log does not name (a crash between the two, where they are
      // not one write) are recorded now, right after the resume, and never called again.
      const unrecorded = unrecordedSteps(run.state.steps, run.recordedSteps(), run.hasRecorded('MODEL_CALL'));
      const resumed = auditEvent('RUN_RESUMED', systemRun('queue', 'RUN_RESUMED_FROM_CHECKPOINT'), {
        completed_steps: run.state.steps.length,
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
 * A storage failure (a full disk, EIO, a read-only file system) ends the run loudly, never as
 * completed: status `error`, reason `STORAGE_WRITE_FAILED`, naming the path and the errno. What can
 * still be recorded is (the audit log and the checkpoint, in one commit); what was kept before stays
 * as it was, since every kept file is replaced whole or not at all.
 */
async function endOnStorageFailure(runId: string, deps: RunDeps, body: () => Promise<RunOutcome>): Promise<RunOutcome> {
  try {
    return await body();
  } catch (error) {
    return await endRun(runId, deps, error);
  }
}

async function endRun(runId: string, deps: RunDeps, error: unknown): Promise<RunOutcome> {
  if (deps.signal?.aborted) throw error;
  if (!(error instanceof StorageError)) {
    await recordFailure(runId, error, deps);
    throw error;
  }
  const decision = systemStopDecision('queue', STORAGE_WRITE_FAILED);
  const where = error.path;
  const message = `storage failed: could not write ${where} (${error.errno ?? 'I/O error'}) — ${error.errno === 'ENOSPC' ? 'the disk is full; free space and resume it' : 'check the file system'} with: maestro run --resume ${runId}`;
  let auditLog = '';
  try {
    const run = await deps.ledger.open(runId);
    auditLog = run.log;
    try {
      // Ended with its reason; `maestro run --resume` takes it up again from here once there is room.
      const record = auditEvent('RUN_FAILED', decision, { errno: error.errno ?? null, path: where });
      await settleFailure(run, { decision, message, record, at: deps.clock.now().toISOString() });
    } finally {
      await run.close();
    }
  } catch {
    // The log and the checkpoint may be on the same full disk: the outcome below still says what happened.
  }
  return buildOutcome({ runId, status: 'error', decision, auditLog, message, issues: [`${where}: ${error.errno ?? 'write failed'}`] });
}

/**
 * Anything else that ends a run by surprise (a bug) ends it as `error` on its record, so no run is
 * left `running` with nobody running it; the error itself goes on to the caller.
 */
async function recordFailure(runId: string, error: unknown, deps: RunDeps): Promise<void> {
  try {
    const state = await deps.ledger.load(runId);
    if (state?.status !== 'running') return;
    const decision = systemStopDecision('queue', failureReason(error instanceof AppError ? error.code : undefined));
    const run = await deps.ledger.open(runId);
    try {
      const message = `the run failed: ${error instanceof Error ? error.message : String(error)}`;
      const record = auditEvent('RUN_FAILED', decision, { error: error instanceof Error ? error.name : typeof error });
      await settleFailure(run, { decision, message, record, at: deps.clock.now().toISOString() });
    } finally {
      await run.close();
    }
  } catch {
    // Recording is best effort; the caller reports the error either way.
  }
}

/** A decision of the system that lets the run go on, on this layer. */
function systemRun(layer: DecisionRecord['layer'], reason: string): DecisionRecord {
  return { decision: 'RUN', reason_code: reason, sealed: false, overrideable: false, final_decider: 'SYSTEM', layer };
}

export { STORAGE_WRITE_FAILED };

async function rejectInvalid(run: OpenRun, issues: string[], source: string, received: readonly AuditEvent[]): Promise<RunOutcome> {
  const missing = issues.some((i) => i.startsWith('task_description:') && /required/.test(i));
  const decision: DecisionRecord = failClosedDecision(missing ? 'SPEC_MISSING_KEYS' : 'SPEC_INVALID_INPUT', 'validation');
  await run.commit({
    records: [
      ...received,
      auditEvent('COMMAND_INVALID', decision, { issue_count: issues.length, issue_paths: issues.map((i) => i.split(':')[0] ?? '') }),
    ],
  });
  const message = `${source} is not a valid command file:\n${issues.map((i) => `  ${i}`).join('\n')}`;
  return buildOutcome({ runId: run.runId, status: 'invalid', decision, auditLog: run.log, message, issues });
}

/** The run cannot be resumed (unknown, paused without a decision, or already ended). */
export class RunNotResumableError extends AppError {
  readonly code = 'RUN_NOT_RESUMABLE' as const;
}

export type { CommandFile };
