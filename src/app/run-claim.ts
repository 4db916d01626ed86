import { RunHeldError } from '../domain/errors.js';
import { POISON_CLAIM_FAILURES, type Claim, type ClaimOutcome, type ClaimStore, type Rejection } from '../domain/queue.js';
import { parseCommandText } from '../domain/command-file.js';
import { buildOutcome } from '../domain/run-machine.js';
import { decideRun } from '../domain/run/policy.js';
import { failureEnding } from './failure-ending.js';
import { processCommand, resumeRun, RunNotResumableError } from './process-command.js';
import type { RunDeps, RunOutcome } from './run-deps.js';
import { settleOutside } from './settle-run.js';

/** How a claimed command is (re)started: a new claim, a resume from its checkpoint, or from the start. */
/** How a claimed run is taken up; `outage`: a decision the route breaker posted when the route its outage paused on answered again. */
export type ResumeKind = 'new' | 'checkpoint' | 'start' | 'decision' | 'outage';

/** How a claimed command ended, and where its file went. */
export type ClaimResult = ClaimOutcome;

export interface RunClaimDeps {
  readonly run: RunDeps;
  /** Only settling is needed here (claiming is the loop's business), so an engine's claim store fits too. */
  readonly claims: Pick<ClaimStore, 'read' | 'release' | 'reject' | 'recordFailure'>;
}

/** The one place a claim's result is made: its run's outcome (buildOutcome), with where its file went. */
export function claimResult(claim: Claim, outcome: RunOutcome, rejectedTo: string | null = null): ClaimResult {
  return { ...outcome, source: claim.source, rejected_to: rejectedTo };
}

/**
 * Decides how to start a claim. A recovered claim with a checkpoint still running resumes from it;
 * one whose run already ended (completed, stopped, paused, …) is not run again: `ended` says how it
 * ended, and only its file is settled. A command started from its file that cannot be read or does
 * not parse is `refused`: runClaim rejects it as ever, and a loop never announces it as executing.
 */
export async function planClaim(claim: Claim, deps: RunClaimDeps): Promise<{ kind: ResumeKind; ended?: RunOutcome; refused?: true }> {
  if (!claim.recovered && claim.kind !== 'decision') return fromItsFile('new', claim, deps);
  // An unreadable checkpoint is reported by the resume itself, inside the error boundary.
  const state = await deps.run.ledger.load(claim.runId).catch(() => null);
  if (state === null) return { kind: 'checkpoint' };
  if (!state) return fromItsFile('start', claim, deps);
  if (state.status === 'running') {
    if (claim.kind !== 'decision' || claim.recovered) return { kind: 'checkpoint' };
    return { kind: state.trail.at(-1)?.reason_code === 'ROUTE_RECOVERED' ? 'outage' : 'decision' };
  }
  // Its journal, if a process killed after the ending left one, is folded as the run is let go.
  await deps.run.ledger
    .open(claim.runId)
    .then((run) => run.close())
    .catch(() => undefined);
  const ended = buildOutcome({
    runId: state.run_id,
    status: state.status,
    decision: state.decision ?? { decision: '', reason_code: `RUN_${state.status.toUpperCase()}` },
    auditLog: '',
    message: `the run had already ended (${state.status}) before the restart${state.summary ? `: ${state.summary}` : ''}`,
    artifact: state.artifact ?? null,
  });
  return { kind: 'checkpoint', ended };
}

async function fromItsFile(kind: ResumeKind, claim: Claim, deps: RunClaimDeps): Promise<{ kind: ResumeKind; refused?: true }> {
  const text = await deps.claims.read(claim).catch(() => undefined);
  return text !== undefined && parseCommandText(text).ok ? { kind } : { kind, refused: true };
}

/**
 * Runs one claimed command through the one use case (`processCommand`, or `resumeRun` for a
 * checkpoint) and settles its file: deleted when the run ended (completed or stopped) or was
 * paused (its command is kept with the run), moved to `.maestro/rejected/` with the reason when it
 * was invalid or failed. Throws only when the run was interrupted (`signal`).
 */
export async function runClaim(claim: Claim, kind: ResumeKind, deps: RunClaimDeps): Promise<ClaimResult> {
  let outcome: RunOutcome;
  try {
    outcome =
      kind === 'checkpoint' || kind === 'decision' || kind === 'outage'
        ? await resumeRun(claim.runId, deps.run)
        : await processCommand({ text: await deps.claims.read(claim), source: claim.source, runId: claim.runId }, deps.run);
  } catch (error) {
    if (deps.run.signal?.aborted) throw error;
    if (error instanceof RunHeldError) return heldElsewhere(claim, error, deps);
    return failClaim(claim, error, deps);
  }
  return settleClaim(claim, outcome, deps);
}

/**
 * A claim taken in the foreground (`run --resume`, `hitl decide --run`): planned, run and settled as
 * a loop does. Held by another process, it is refused; an interruption throws (the caller says how
 * the run goes on).
 */
export async function runClaimHere(claim: Claim, deps: RunClaimDeps): Promise<RunOutcome> {
  const plan = await planClaim(claim, deps);
  const result = plan.ended ? await settleClaim(claim, plan.ended, deps) : await runClaim(claim, plan.kind, deps);
  if (result.status === 'interrupted') throw new RunNotResumableError(result.message);
  return result;
}

/**
 * The run is being run by another live process (found before anything was written): nothing of it
 * is touched here, not its checkpoint, its log or its claim, which stays for the next start.
 */
async function heldElsewhere(claim: Claim, error: RunHeldError, deps: RunClaimDeps): Promise<ClaimResult> {
  const message = `${error.message}; its command stays in .maestro/inflight/ and the next start looks again`;
  return claimResult(claim, await settleOutside(claim.runId, deps.run, { ending: decideRun({ kind: 'held_elsewhere' }), message }));
}

/**
 * The run stopped at its last checkpoint and goes on from there: this process is stopping (recorded
 * in its log, best effort: stopping must not fail because the log could not be written), or a worker
 * lost its engine claim (nothing more is written: its writes are fenced).
 */
export async function interruptClaim(
  claim: Claim,
  deps: RunClaimDeps,
  cause: 'interrupted' | 'claim_lost',
  message: string,
): Promise<ClaimResult> {
  return claimResult(claim, await settleOutside(claim.runId, deps.run, { ending: decideRun({ kind: cause }), message }));
}

/**
 * Puts the file of a run that has ended where it belongs; also used for recovered runs that had
 * ended. Never throws: if the file cannot be moved, it stays claimed and the next start settles it.
 */
export async function settleClaim(claim: Claim, outcome: RunOutcome, deps: RunClaimDeps): Promise<ClaimResult> {
  try {
    const rejected = outcome.status === 'invalid' || outcome.status === 'error';
    return rejected ? await rejectClaim(claim, outcome, deps.claims) : claimResult(claim, outcome, await release(claim, deps));
  } catch (error) {
    const why = `could not move its command file: ${(error as Error).message}; it stays in .maestro/inflight/ and is settled on the next start`;
    return claimResult(claim, { ...outcome, message: `${outcome.message}\n(${why})` });
  }
}

async function release(claim: Claim, deps: RunClaimDeps): Promise<null> {
  await deps.claims.release(claim);
  return null;
}

/** Moves the file of a refused or failed claim to `.maestro/rejected/`, with its outcome's reason and every problem. */
export async function rejectClaim(claim: Claim, outcome: RunOutcome, claims: Pick<ClaimStore, 'reject'>): Promise<ClaimResult> {
  return claimResult(claim, outcome, await claims.reject(claim, rejectionOf(outcome)));
}

function rejectionOf(outcome: RunOutcome): Rejection {
  return {
    status: outcome.status === 'invalid' ? 'invalid' : 'error',
    reason_code: outcome.reason_code,
    message: outcome.message,
    issues: outcome.issues ?? [outcome.message.split('\n')[0] ?? outcome.reason_code],
    audit_log: outcome.audit_log || null,
  };
}

/**
 * One failing command never stops the watcher: the failure is settled by its row of the policy
 * table (recorded in the run's audit log and checkpoint), and the command moves to
 * `.maestro/rejected/` with the reason. If even that fails (a full disk), the claim stays in
 * `.maestro/inflight/` and the next start retries it.
 */
async function failClaim(claim: Claim, error: unknown, deps: RunClaimDeps): Promise<ClaimResult> {
  const outcome = await settleOutside(claim.runId, deps.run, failureEnding(error, { runId: claim.runId, source: claim.source }));
  try {
    if (outcome.unrecorded !== undefined) throw new Error(outcome.unrecorded);
    return await rejectClaim(claim, outcome, deps.claims);
  } catch (secondary) {
    return countUnrecordedFailure(claim, outcome, secondary, deps);
  }
}

/**
 * A claim whose handling failed outside the run's own boundary (a bug in planning or settling it,
 * before or after its run): counted as a failure that could not be recorded, so a claim that fails so
 * on every start is set aside after a few rather than retried forever.
 */
export function failedOutsideRun(claim: Claim, error: unknown, deps: RunClaimDeps): Promise<ClaimResult> {
  const message = `internal error while handling ${claim.source}: ${error instanceof Error ? error.message : String(error)}`;
  const decision = { decision: '', reason_code: 'RUN_FAILED_INTERNAL' };
  return countUnrecordedFailure(claim, buildOutcome({ runId: claim.runId, status: 'error', decision, auditLog: '', message }), error, deps);
}

/**
 * A failure that could not even be recorded. A claim that keeps failing so would be taken over and
 * fail again by every later watcher, forever: after a few times in a row it is rejected, with every
 * reason, so a person sees it (`maestro requeue` puts it back once fixed).
 */
async function countUnrecordedFailure(claim: Claim, outcome: RunOutcome, secondary: unknown, deps: RunClaimDeps): Promise<ClaimResult> {
  const { message } = outcome;
  const why = secondary instanceof Error ? secondary.message : String(secondary);
  const stays = `(could not record it: ${why}; the command stays in .maestro/inflight/ and is retried on the next start`;
  try {
    const reasons = await deps.claims.recordFailure(claim, `${message} (could not record it: ${why})`);
    if (reasons.length < POISON_CLAIM_FAILURES)
      return claimResult(claim, { ...outcome, message: `${message}\n${stays} — failure ${reasons.length} of ${POISON_CLAIM_FAILURES})` });
    const { reason_code } = decideRun({ kind: 'failed_repeatedly' }).decision;
    const rejectedTo = await deps.claims.reject(claim, {
      status: 'error',
      reason_code,
      message: `${claim.source} failed ${reasons.length} times in a row and was set aside`,
      issues: reasons,
      audit_log: null,
    });
    const setAside = `(it failed ${reasons.length} times in a row without being recorded: ${why}; moved to .maestro/rejected/ with every reason)`;
    return claimResult(claim, { ...outcome, reason_code, message: `${message}\n${setAside}` }, rejectedTo);
  } catch {
    return claimResult(claim, { ...outcome, message: `${message}\n${stays})` });
  }
}
