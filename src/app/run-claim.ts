import { failureReason, type ReasonCode } from '../domain/codes.js';
import { settleFailure } from './settle-run.js';
import { auditEvent, type AuditEvent } from '../domain/audit.js';
import { failClosedDecision, runDecision, systemStopDecision, type DecisionRecord } from '../domain/decision.js';
import { AppError, InvalidInputError, RunHeldError } from '../domain/errors.js';
import { POISON_CLAIM_FAILURES, type Claim, type ClaimStore, type WatchEvent } from '../domain/queue.js';
import { processCommand, resumeRun } from './process-command.js';
import type { RunDeps, RunOutcome } from './run-deps.js';
import { OUTCOME_DECISION } from '../domain/run-machine.js';

/** How a claimed command is (re)started: a new claim, a resume from its checkpoint, or from the start. */
/** How a claimed run is taken up; `outage`: a decision the route breaker posted when the route its outage paused on answered again. */
export type ResumeKind = 'new' | 'checkpoint' | 'start' | 'decision' | 'outage';

type Finished = Extract<WatchEvent, { kind: 'finished' }>;
/** The outcome part of a `finished` event; the loop adds the state fields. */
export type ClaimResult = Omit<Finished, 'kind' | 'state' | 'from' | 'queued'>;

export interface RunClaimDeps {
  readonly run: RunDeps;
  /** Only settling is needed here (claiming is the loop's business), so an engine's claim store fits too. */
  readonly claims: Pick<ClaimStore, 'read' | 'release' | 'reject' | 'recordFailure'>;
}

/**
 * Decides how to start a claim. A recovered claim with a checkpoint still running resumes from it;
 * one whose run already ended (completed, stopped, paused, …) is not run again: `ended` says how it
 * ended, and only its file is settled.
 */
export async function planClaim(claim: Claim, deps: RunClaimDeps): Promise<{ kind: ResumeKind; ended?: RunOutcome }> {
  if (!claim.recovered && claim.kind !== 'decision') return { kind: 'new' };
  // An unreadable checkpoint is reported by the resume itself, inside the error boundary.
  const state = await deps.run.ledger.load(claim.runId).catch(() => null);
  if (state === null) return { kind: 'checkpoint' };
  if (!state) return { kind: 'start' };
  if (state.status === 'running') {
    if (claim.kind !== 'decision' || claim.recovered) return { kind: 'checkpoint' };
    return { kind: state.trail.at(-1)?.reason_code === 'ROUTE_RECOVERED' ? 'outage' : 'decision' };
  }
  const ended: RunOutcome = {
    run_id: state.run_id,
    status: state.status,
    decision: OUTCOME_DECISION[state.status],
    reason_code: state.decision?.reason_code ?? `RUN_${state.status.toUpperCase()}`,
    artifact: state.artifact ?? null,
    audit_log: '',
    message: `the run had already ended (${state.status}) before the restart${state.summary ? `: ${state.summary}` : ''}`,
  };
  return { kind: 'checkpoint', ended };
}

/**
 * Runs one claimed command through the one use case (`processCommand`, or `resumeRun` for a
 * checkpoint) and settles its file: deleted when the run ended (completed or stopped) or was
 * paused (its command is kept in `.maestro/runs/<run_id>/`), moved to `.maestro/rejected/` with
 * the reason when it was invalid or failed. Throws only when the run was interrupted (`signal`).
 */
/**
 * A claim's result as the outcome of a run taken up in the foreground (`run --resume`, `hitl decide
 * --run`); a run interrupted meanwhile has no outcome: the caller's error for it is thrown.
 */
export function outcomeOfClaim(result: ClaimResult, interrupted: (message: string) => Error): RunOutcome {
  if (result.status === 'interrupted') throw interrupted(result.message);
  return {
    run_id: result.run_id,
    status: result.status,
    decision: result.decision,
    reason_code: result.reason_code,
    artifact: result.artifact,
    audit_log: result.audit_log ?? '',
    message: result.message,
  };
}

export async function runClaim(claim: Claim, kind: ResumeKind, deps: RunClaimDeps): Promise<ClaimResult> {
  let outcome: RunOutcome;
  try {
    outcome =
      kind === 'checkpoint' || kind === 'decision' || kind === 'outage'
        ? await resumeRun(claim.runId, deps.run)
        : await processCommand({ text: await deps.claims.read(claim), source: claim.source, runId: claim.runId }, deps.run);
  } catch (error) {
    if (deps.run.signal?.aborted) throw error;
    if (error instanceof RunHeldError) return heldElsewhere(claim, error);
    return failClaim(claim, error, deps);
  }
  return settleClaim(claim, outcome, deps);
}

/**
 * The run is being run by another live process (found before anything was written): nothing of it
 * is touched here, not its checkpoint, its log or its claim, which stays for the next start.
 */
function heldElsewhere(claim: Claim, error: RunHeldError): ClaimResult {
  return {
    run_id: claim.runId,
    source: claim.source,
    status: 'interrupted',
    decision: null,
    reason_code: 'RUN_HELD_ELSEWHERE',
    artifact: null,
    audit_log: null,
    rejected_to: null,
    message: `${error.message}; its command stays in .maestro/inflight/ and the next start looks again`,
  };
}

/**
 * Puts the file of a run that has ended where it belongs; also used for recovered runs that had
 * ended. Never throws: if the file cannot be moved, it stays claimed and the next start settles it.
 */
export async function settleClaim(claim: Claim, outcome: RunOutcome, deps: RunClaimDeps): Promise<ClaimResult> {
  const base = {
    run_id: claim.runId,
    source: claim.source,
    status: outcome.status,
    decision: outcome.decision,
    reason_code: outcome.reason_code,
    artifact: outcome.artifact,
    audit_log: outcome.audit_log || null,
    message: outcome.message,
  };
  try {
    return { ...base, rejected_to: await moveClaimFile(claim, outcome, deps) };
  } catch (error) {
    return {
      ...base,
      rejected_to: null,
      message: `${outcome.message}\n(could not move its command file: ${(error as Error).message}; it stays in .maestro/inflight/ and is settled on the next start)`,
    };
  }
}

/** Rejects the file of an invalid or failed run (returning where it went), or releases the claim. */
async function moveClaimFile(claim: Claim, outcome: RunOutcome, deps: RunClaimDeps): Promise<string | null> {
  if (outcome.status === 'invalid' || outcome.status === 'error') {
    const rejectedTo = await deps.claims.reject(claim, {
      status: outcome.status,
      reason_code: outcome.reason_code,
      message: outcome.message,
      issues: outcome.issues ?? [outcome.message.split('\n')[0] ?? outcome.reason_code],
      audit_log: outcome.audit_log || null,
    });
    return rejectedTo;
  }
  await deps.claims.release(claim);
  return null;
}

/**
 * One failing command never stops the watcher: the failure is recorded in the run's audit log and
 * checkpoint, and the command moves to `.maestro/rejected/` with the reason. If even that fails
 * (a full disk), the claim stays in `.maestro/inflight/` and the next start retries it.
 */
async function failClaim(claim: Claim, error: unknown, deps: RunClaimDeps): Promise<ClaimResult> {
  const { invalid, reasonCode, message, issues, decision } = describeClaimFailure(claim, error);
  const result: ClaimResult = {
    run_id: claim.runId,
    source: claim.source,
    status: invalid ? 'invalid' : 'error',
    // Its audit record keeps the decision; the outcome says none was reached (OUTCOME_DECISION).
    decision: null,
    reason_code: reasonCode,
    artifact: null,
    audit_log: null,
    rejected_to: null,
    message,
  };
  try {
    const record = auditEvent(invalid ? 'COMMAND_REJECTED' : 'RUN_FAILED', decision, {
      error: error instanceof Error ? error.name : typeof error,
      issue_paths: issues.map((i) => i.split(':')[0] ?? ''),
    });
    const auditLog = await recordClaimFailure(claim, { decision, message, record }, deps);
    const rejectedTo = await deps.claims.reject(claim, {
      status: invalid ? 'invalid' : 'error',
      reason_code: reasonCode,
      message,
      issues,
      audit_log: auditLog,
    });
    return { ...result, audit_log: auditLog, rejected_to: rejectedTo };
  } catch (secondary) {
    return countUnrecordedFailure(claim, result, secondary, deps);
  }
}

/** What a claim's failure means: refused unread (invalid input) or a run that failed, with its reason, words and decision. */
function describeClaimFailure(
  claim: Claim,
  error: unknown,
): { invalid: boolean; reasonCode: ReasonCode; message: string; issues: string[]; decision: DecisionRecord } {
  const invalid = error instanceof InvalidInputError;
  const reasonCode: ReasonCode = invalid ? 'SPEC_INVALID_INPUT' : failureReason(error instanceof AppError ? error.code : undefined);
  const message = invalid
    ? `${claim.source} was refused unread`
    : `the run failed: ${error instanceof Error ? error.message : String(error)}`;
  const issues = invalid ? [...error.issues] : [`(run): ${message}`];
  const decision = invalid ? failClosedDecision('SPEC_INVALID_INPUT', 'queue') : systemStopDecision('queue', reasonCode);
  return { invalid, reasonCode, message, issues, decision };
}

/**
 * A failure that could not even be recorded. A claim that keeps failing so would be taken over and
 * fail again by every later watcher, forever: after a few times in a row it is rejected, with every
 * reason, so a person sees it (`maestro requeue` puts it back once fixed).
 */
async function countUnrecordedFailure(claim: Claim, result: ClaimResult, secondary: unknown, deps: RunClaimDeps): Promise<ClaimResult> {
  const { message } = result;
  const why = secondary instanceof Error ? secondary.message : String(secondary);
  try {
    const reasons = await deps.claims.recordFailure(claim, `${message} (could not record it: ${why})`);
    if (reasons.length >= POISON_CLAIM_FAILURES) {
      const rejectedTo = await deps.claims.reject(claim, {
        status: 'error',
        reason_code: 'RUN_FAILED_REPEATEDLY',
        message: `${claim.source} failed ${reasons.length} times in a row and was set aside`,
        issues: reasons,
        audit_log: null,
      });
      return {
        ...result,
        reason_code: 'RUN_FAILED_REPEATEDLY',
        rejected_to: rejectedTo,
        message: `${message}\n(it failed ${reasons.length} times in a row without being recorded: ${why}; moved to .maestro/rejected/ with every reason)`,
      };
    }
    return {
      ...result,
      message: `${message}\n(could not record it: ${why}; the command stays in .maestro/inflight/ and is retried on the next start — failure ${reasons.length} of ${POISON_CLAIM_FAILURES})`,
    };
  } catch {
    return {
      ...result,
      message: `${message}\n(could not record it: ${why}; the command stays in .maestro/inflight/ and is retried on the next start)`,
    };
  }
}

/**
 * Records why a claimed command failed, and ends its run as failed when it was running (a checkpoint
 * that cannot be read keeps the record only): one commit. Returns the audit log.
 */
async function recordClaimFailure(
  claim: Claim,
  failure: { decision: DecisionRecord; message: string; record: AuditEvent },
  deps: RunClaimDeps,
): Promise<string> {
  const run = await deps.run.ledger.open(claim.runId);
  try {
    await settleFailure(run, { ...failure, at: deps.run.clock.now().toISOString() });
    return run.log;
  } finally {
    await run.close();
  }
}

/** Records in the run's audit log that the watcher stopped it at a checkpoint (it resumes on the next start). */
export async function recordInterruption(claim: Claim, deps: RunClaimDeps): Promise<string | null> {
  try {
    const run = await deps.run.ledger.open(claim.runId);
    try {
      await run.commit({ records: [auditEvent('RUN_INTERRUPTED', runDecision('queue', 'RUN_INTERRUPTED_AT_CHECKPOINT'))] });
      return run.log;
    } finally {
      await run.close();
    }
  } catch {
    // Stopping must not fail because the log could not be written; the checkpoint is what resumes.
    return null;
  }
}
