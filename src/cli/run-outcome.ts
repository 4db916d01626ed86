import type { RunOutcome } from '../compose/use-cases.js';
import { OUTCOME_DECISION } from '../domain/run-machine.js';
import { screenText } from '../domain/screen.js';
import type { Io } from './io.js';
import { chalkFor, statusBadge } from './style.js';

/** Every way a `run` (or `hitl decide --run`, `run --resume`) ends, as `--json`'s `status` says it. */
export type ShownStatus = keyof typeof OUTCOME_DECISION;

/** The exit code of each way out (README, "Exit codes"): the same for every subcommand that runs or resumes a run. */
export const EXIT_BY_STATUS: Record<ShownStatus, number> = {
  completed: 0,
  error: 1,
  invalid: 2,
  refused: 2,
  paused: 3,
  stopped: 4,
  guardrail_stopped: 5,
  interrupted: 130,
};

/** An outcome, or a way out that has no run outcome of its own (refused, interrupted, failed). */
export type ShownOutcome = Omit<RunOutcome, 'status' | 'decision' | 'audit_log'> & {
  readonly status: ShownStatus;
  readonly audit_log: string | null;
};

/** A way out before (or without) a run: nothing was run; `run_id` when one was named. */
export function noRun(status: 'invalid' | 'refused', message: string, runId = ''): ShownOutcome {
  return {
    run_id: runId,
    status,
    reason_code: status === 'invalid' ? 'SPEC_INVALID_INPUT' : 'REQUEST_REFUSED',
    artifact: null,
    audit_log: null,
    message,
  };
}

/**
 * Prints how a run ended and returns its exit code. With `--json`, exactly one JSON object on stdout,
 * whatever the way out, its `decision` the one its `status` says (OUTCOME_DECISION) and its `message`
 * the words a person reads; otherwise the outcome on stdout (`✔ completed <id> — …`, then `artifact:` and
 * `audit log:`), whatever the status. Progress, notices and warnings are stderr's.
 */
export function reportOutcome(
  io: Io,
  opts: { json?: boolean; follow?: boolean },
  raw: ShownOutcome,
  extra: { orchestration?: unknown; answer?: string | null } = {},
): number {
  // Outcomes are screened where they are built; one made here (an unreadable file, an error) is screened here.
  const outcome = { ...raw, message: screenText(raw.message) };
  const code = EXIT_BY_STATUS[outcome.status];
  if (opts.json) {
    const { run_id, status, reason_code, artifact, audit_log, message } = outcome;
    // With --follow --json the outcome is the last of the event lines, and says so, with its time like every line.
    const event = opts.follow ? { ts: new Date().toISOString(), kind: 'outcome' } : {};
    const line = {
      ...event,
      run_id: run_id || null,
      status,
      decision: OUTCOME_DECISION[status],
      reason_code,
      artifact,
      audit_log: audit_log || null,
    };
    const tail = {
      ...(extra.orchestration === undefined ? {} : { orchestration: extra.orchestration }),
      ...(extra.answer === undefined ? {} : { answer: extra.answer }),
    };
    io.stdout.write(`${JSON.stringify({ ...line, message, ...tail })}\n`);
    // For a person at the terminal: what did not complete, said on stderr too (scripts read stdout).
    if (status !== 'completed') io.stderr.write(`${message}\n`);
    return code;
  }
  const c = chalkFor(io);
  io.stdout.write(`${statusBadge(c, outcome.status)}${outcome.run_id ? ` ${c.dim(outcome.run_id)}` : ''} — ${outcome.message}\n`);
  if (outcome.artifact) io.stdout.write(`artifact:  ${outcome.artifact}\n`);
  if (outcome.audit_log) io.stdout.write(`audit log: ${outcome.audit_log}\n`);
  return code;
}
