import type { ReasonCode } from '../codes.js';
import type { DecisionRecord } from '../decision.js';
import type { LlmErrorKind } from '../errors.js';
import type { OutcomeStatus } from '../run-machine.js';
import { CALLS, EVERY, type Call, type PauseClass, type PolicyRow, type RerouteCondition } from './policy-columns.js';
import { POLICY_TABLE } from './policy-table.js';

/**
 * The run's policy as one table (policy-table.ts). Every event that can end, pause, stop or reroute
 * a run — a route that failed, a reply that could not be read, a gate, the council's doubt, a
 * guardrail, a budget, a refused command, a failed write, a bug, an interruption, a run held by
 * another process — is looked up there, with the call on which it happened as a column. `decideRun`
 * is the only function that turns such an event into a decision; `app/settle-run.ts` is the only
 * code that carries a decision out. Nothing else chooses between a pause and a stop, or says what a
 * pause counts for.
 */
export { CALLS, POLICY_TABLE };
export type { Call, PauseClass, PolicyRow, RerouteCondition };

/** What happened. Each kind is a group of rows of the table. */
export type PolicyEvent =
  /** A call's route failed (after its retries) and the REROUTE check found this condition (the most severe, when several hold). */
  | { readonly kind: 'route_failed'; readonly call: Call; readonly failure: LlmErrorKind; readonly condition: RerouteCondition }
  /** The model answered, but not readably, even when asked again with the problem quoted. */
  | { readonly kind: 'reply_unreadable'; readonly call: Call }
  /** A gate did not let the command through (its own decision, already made by `evaluateGates`). */
  | { readonly kind: 'gate'; readonly decision: DecisionRecord }
  /** The council's readable verdicts did not say proceed. */
  | { readonly kind: 'council_doubt'; readonly reason: ReasonCode }
  /** A run budget was crossed. */
  | { readonly kind: 'budget_exceeded' }
  /** A supervisor loop guardrail (seed 002) ended the loop. */
  | { readonly kind: 'guardrail'; readonly reason: ReasonCode }
  /** The loop policy's fourth pause of a conflict (sealed). */
  | { readonly kind: 'loop_limit' }
  /** Persona or route files are broken: nothing can run. */
  | { readonly kind: 'setup_invalid' }
  /** A person stopped the run at a pause. */
  | { readonly kind: 'person_stop' }
  /** The council proceeded (or a person cleared its doubt): the artifact is written. */
  | { readonly kind: 'completed' }
  /** The command was refused before it ran: not a valid command file. */
  | { readonly kind: 'refused'; readonly reason: 'SPEC_INVALID_INPUT' | 'SPEC_MISSING_KEYS' }
  /** A claimed command could not even be read as one (too big, a link, unreadable). */
  | { readonly kind: 'refused_unread' }
  /** A write failed (a full disk, EIO): the run ends where it stood, and can be resumed. */
  | { readonly kind: 'storage_failed' }
  /** Anything else ended the run by surprise (a bug), with its reason (`RUN_FAILED_<error code>`). */
  | { readonly kind: 'internal_error'; readonly reason: ReasonCode }
  /** This process stopped the run at its last checkpoint (a signal, a lost engine claim). */
  | { readonly kind: 'interrupted' }
  /** A worker lost its engine claim (the engine went away): it writes nothing more, and another worker resumes the run. */
  | { readonly kind: 'claim_lost' }
  /** Another live process runs the run: it was not run here. */
  | { readonly kind: 'held_elsewhere' }
  /** A claim failed (or its worker died) so many times in a row that it is set aside for a person. */
  | { readonly kind: 'failed_repeatedly' };

/** What the run does next. `status` is what every view and `run --json` reports. */
export type Ending =
  | { readonly kind: 'reroute'; readonly decision: DecisionRecord }
  | { readonly kind: 'pause'; readonly decision: DecisionRecord; readonly pauseClass: PauseClass }
  | { readonly kind: 'stop'; readonly decision: DecisionRecord; readonly status: 'stopped' | 'guardrail_stopped' }
  | { readonly kind: 'complete'; readonly decision: DecisionRecord }
  | { readonly kind: 'invalid'; readonly decision: DecisionRecord }
  /** A failure ended the run where it stood (`error`); a resumable one is taken up again by `run --resume`. */
  | { readonly kind: 'fail'; readonly decision: DecisionRecord; readonly resumable: boolean }
  /** The run stopped here and goes on from its checkpoint (`interrupted`); `recorded`: its log says so (not when another process runs it). */
  | { readonly kind: 'interrupt'; readonly decision: DecisionRecord; readonly recorded: boolean };

/**
 * The call column for pauses of a failed route: a call that gates the whole council names itself,
 * so a person reading the pause knows nothing was sent to the council. The row (and its condition,
 * in the record's details) is otherwise the same on every call.
 */
const ROUTE_PAUSE_REASON_BY_CALL: Partial<Record<Call, ReasonCode>> = { classify: 'MEDIATOR_CLASSIFICATION_FAILED' };

/** Reason codes of gate pauses whose cause is the set-up, not the task. */
const SETUP_GATE_REASONS: ReadonlySet<string> = new Set([
  'MEANING_UNKNOWN_PERSONA',
  'MEANING_EMPTY_TASK',
  'CONSISTENCY_INPUT_MISSING',
  'SPEC_INVALID_INPUT',
  'SPEC_MISSING_KEYS',
]);

/** Reason codes of failures, for the rows whose reason comes from the event. */
const FAILURE_REASONS: Record<LlmErrorKind, ReasonCode> = {
  timeout: 'MODEL_TIMEOUT',
  rate_limit: 'MODEL_RATE_LIMITED',
  server: 'MODEL_SERVER_ERROR',
  network: 'MODEL_UNREACHABLE',
  invalid_output: 'MODEL_INVALID_OUTPUT',
  quota: 'MODEL_QUOTA_EXCEEDED',
  auth: 'MODEL_AUTH_FAILED',
  bad_request: 'MODEL_BAD_REQUEST',
  cassette: 'MODEL_REPLAY_MISMATCH',
};

/** The failure kinds a REROUTE may answer: the route did not answer; others (quota, auth, a refused request) need a person. */
export const REROUTABLE_FAILURES: ReadonlySet<LlmErrorKind> = new Set(['timeout', 'rate_limit', 'server', 'network', 'invalid_output']);

/** The reason code of a failure kind. */
export function failureReason(kind: LlmErrorKind): ReasonCode {
  return FAILURE_REASONS[kind];
}

function causeOf(event: PolicyEvent): string {
  switch (event.kind) {
    case 'route_failed':
      return `route_failed:${event.condition}`;
    case 'gate':
      if (event.decision.sealed) return 'gate:sealed';
      if (event.decision.decision === 'STOPPED') return 'gate:sealed';
      return SETUP_GATE_REASONS.has(event.decision.reason_code) ? 'gate:setup' : 'gate:pause';
    default:
      return event.kind;
  }
}

function callOf(event: PolicyEvent): Call | undefined {
  return event.kind === 'route_failed' || event.kind === 'reply_unreadable' ? event.call : undefined;
}

function reasonOf(row: PolicyRow, event: PolicyEvent): ReasonCode {
  if (event.kind === 'route_failed' && row.outcome === 'pause') {
    const named = ROUTE_PAUSE_REASON_BY_CALL[event.call];
    if (named) return named;
  }
  if (row.reason !== 'from_event') return row.reason;
  switch (event.kind) {
    case 'route_failed':
      return FAILURE_REASONS[event.failure];
    case 'gate':
      return event.decision.reason_code as ReasonCode;
    case 'council_doubt':
    case 'guardrail':
    case 'internal_error':
    case 'refused':
      return event.reason;
    default:
      throw new Error(`policy row ${row.cause} takes its reason from an event that has none`);
  }
}

/** The row that decides an event on a call. Every event has one (the table is total: a test checks it). */
export function policyRowFor(event: PolicyEvent): PolicyRow {
  const cause = causeOf(event);
  const call = callOf(event);
  const row = POLICY_TABLE.find((r) => r.cause === cause && (r.calls === EVERY || (call !== undefined && r.calls.includes(call))));
  if (!row) throw new Error(`no policy row for ${cause}${call ? ` on a ${call} call` : ''}`);
  return row;
}

/**
 * The one decision of the run's policy: what an event means for the run. Pure; the caller carries
 * the ending out through the one applier. A gate's own decision keeps its layer (ethics or acc).
 */
export function decideRun(event: PolicyEvent): Ending {
  const row = policyRowFor(event);
  const reason = reasonOf(row, event);
  const layer =
    event.kind === 'gate'
      ? event.decision.layer
      : event.kind === 'route_failed' && reason === 'MEDIATOR_CLASSIFICATION_FAILED'
        ? 'model'
        : row.layer;
  const system = (decision: DecisionRecord['decision'], sealed: boolean, overrideable: boolean): DecisionRecord => ({
    decision,
    reason_code: reason,
    sealed,
    overrideable,
    final_decider: 'SYSTEM',
    layer,
  });
  switch (row.outcome) {
    case 'reroute':
      return { kind: 'reroute', decision: system('REROUTE', false, false) };
    case 'pause':
      return { kind: 'pause', decision: system('PAUSE_FOR_HITL', false, true), pauseClass: row.pauseClass ?? 'judgement' };
    case 'sealed_stop':
      return { kind: 'stop', decision: system('STOPPED', true, false), status: 'stopped' };
    case 'stop':
      return {
        kind: 'stop',
        decision:
          event.kind === 'person_stop' ? { ...system('STOPPED', false, false), final_decider: 'USER' } : system('STOPPED', false, false),
        status: 'stopped',
      };
    case 'guardrail_stop':
      return { kind: 'stop', decision: system('STOPPED', false, false), status: 'guardrail_stopped' };
    case 'complete':
      return { kind: 'complete', decision: { ...system('RUN', false, false) } };
    case 'invalid':
      return { kind: 'invalid', decision: system('PAUSE_FOR_HITL', false, true) };
    case 'fail':
    case 'fail_resumable':
      return { kind: 'fail', decision: system('STOPPED', false, false), resumable: row.outcome === 'fail_resumable' };
    case 'interrupt':
    case 'not_run':
      return { kind: 'interrupt', decision: system('RUN', false, false), recorded: row.outcome === 'interrupt' };
  }
}

/** Severity of a refused REROUTE, most severe first: when several conditions hold, the strictest decides (fail closed). */
const REROUTE_SEVERITY: readonly RerouteCondition[] = [
  'not_reroutable',
  'not_routed',
  'local_to_remote',
  'privilege_escalation',
  'weaker_constraints',
  'ambiguous_intent',
  'policy_sensitive',
  'no_fallback_route',
  'reroute_limit',
];

/** The condition that decides among those that hold: the most severe, or `allowed` when none does. */
export function decidingCondition(held: readonly RerouteCondition[]): RerouteCondition {
  return REROUTE_SEVERITY.find((c) => held.includes(c)) ?? 'allowed';
}

/** The status every view reports for an ending (a REROUTE is not one: the routed client carries it out). */
export function endingStatus(ending: Exclude<Ending, { kind: 'reroute' }>): OutcomeStatus {
  switch (ending.kind) {
    case 'pause':
      return 'paused';
    case 'stop':
      return ending.status;
    case 'complete':
      return 'completed';
    case 'invalid':
      return 'invalid';
    case 'fail':
      return 'error';
    case 'interrupt':
      return 'interrupted';
  }
}
