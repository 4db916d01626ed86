import { auditEvent } from '../domain/audit.js';
import { parseCommandText, type CommandFile } from '../domain/command-file.js';
import { failClosedDecision, type DecisionRecord } from '../domain/decision.js';
import { AppError } from '../domain/errors.js';
import type { AuditSink } from '../domain/ports.js';
import { RUN_STATE_VERSION, type RunState } from '../domain/run-state.js';
import { executeRun } from './execute-run.js';
import type { RunDeps, RunOutcome } from './run-deps.js';

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
  const audit = await deps.audit.open(runId);
  await audit.append(
    auditEvent('COMMAND_RECEIVED', { decision: 'RUN', reason_code: 'COMMAND_RECEIVED', sealed: false, overrideable: false, final_decider: 'SYSTEM', layer: 'queue' }, {
      bytes: Buffer.byteLength(input.text),
      sha256: deps.sha256(input.text),
    }),
  );

  const parsed = parseCommandText(input.text);
  if (!parsed.ok) return rejectInvalid(runId, parsed.issues, audit, input.source);

  const now = deps.clock.now().toISOString();
  const state: RunState = {
    schemaVersion: RUN_STATE_VERSION,
    run_id: runId,
    status: 'running',
    created_at: now,
    updated_at: now,
    source: input.source,
    task_sha256: deps.sha256(parsed.value.task_description),
    command: parsed.value,
    steps: [],
    trail: [],
    reroutes: [],
    hitl: [],
  };
  await deps.runs.save(state);
  await deps.runs.saveFile(runId, 'command.json', input.text);
  await audit.append(
    auditEvent('COMMAND_VALID', { decision: 'RUN', reason_code: 'SPEC_OK', sealed: false, overrideable: false, final_decider: 'SYSTEM', layer: 'validation' }, {
      task_sha256: state.task_sha256,
      task_chars: parsed.value.task_description.length,
      input_artifacts: parsed.value.input_artifacts.length,
    }),
  );
  return executeRun(state, audit, deps);
}

/** Resumes a run from its checkpoint (after a crash or an interruption); finished model calls are not repeated. */
export async function resumeRun(runId: string, deps: RunDeps): Promise<RunOutcome> {
  const state = await deps.runs.load(runId);
  if (!state) throw new RunNotResumableError(`there is no run "${runId}" in this workspace`);
  if (state.status === 'paused') {
    throw new RunNotResumableError(`run ${runId} is paused for a person (${state.pause?.reason_code ?? 'see maestro hitl show'}); decide first: maestro hitl decide ${runId} continue|stop`);
  }
  if (state.status !== 'running') throw new RunNotResumableError(`run ${runId} has already ended (${state.status})`);
  const audit = await deps.audit.open(runId);
  await audit.append(
    auditEvent('RUN_RESUMED', { decision: 'RUN', reason_code: 'RUN_RESUMED_FROM_CHECKPOINT', sealed: false, overrideable: false, final_decider: 'SYSTEM', layer: 'queue' }, {
      completed_steps: state.steps.length,
    }),
  );
  return executeRun(state, audit, deps);
}

async function rejectInvalid(runId: string, issues: string[], audit: AuditSink, source: string): Promise<RunOutcome> {
  const missing = issues.some((i) => i.startsWith('task_description:') && /required/.test(i));
  const decision: DecisionRecord = failClosedDecision(missing ? 'SPEC_MISSING_KEYS' : 'SPEC_INVALID_INPUT', 'validation');
  await audit.append(auditEvent('COMMAND_INVALID', decision, { issue_count: issues.length, issue_paths: issues.map((i) => i.split(':')[0] ?? '') }));
  return {
    run_id: runId,
    status: 'invalid',
    decision: decision.decision,
    reason_code: decision.reason_code,
    artifact: null,
    audit_log: audit.path,
    message: `${source} is not a valid command file:\n${issues.map((i) => `  ${i}`).join('\n')}`,
    issues,
  };
}

/** The run cannot be resumed (unknown, paused without a decision, or already ended). */
export class RunNotResumableError extends AppError {
  readonly code = 'RUN_NOT_RESUMABLE' as const;
}

export type { CommandFile };
