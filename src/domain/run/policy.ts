import type { ReasonCode } from '../codes.js';
import type { DecisionRecord, Layer } from '../decision.js';
import type { LlmErrorKind } from '../errors.js';
import type { CallPurpose } from '../chat.js';

/**
 * The run's policy as one table. Every event that can end, pause, stop or reroute a run — a route
 * that failed, a reply that could not be read, a gate, the council's doubt, a guardrail, a budget —
 * is looked up here, with the call on which it happened as a column. `decideRun` is the only
 * function that turns such an event into a decision; `app/settle-run.ts` is the only code that
 * carries a decision out. Nothing else chooses between a pause and a stop, or says what a pause
 * counts for.
 */

/** The calls of a run: the table's columns (what a call is *for*, never which code path made it). */
export const CALLS = [
  'classify',
  'turn',
  'verdict',
  'assessment',
  'decision',
  'item',
  'review',
  'synthesis',
  'plan',
] as const satisfies readonly CallPurpose[];
export type Call = (typeof CALLS)[number];

/**
 * Why a run paused, as the loop policy sees it. Only a `judgement` — the council's readable doubt,
 * a content gate, a budget — says something about the task and counts towards the loop policy (plan
 * at 3, end of the conflict line at 4). An `outage` (a route that did not answer, or answered
 * unreadably after its retry) or a `setup` problem never counts.
 */
export type PauseClass = 'judgement' | 'outage' | 'setup';

/**
 * Why a REROUTE to the persona's fallback route is refused: seed 000's table, one condition a row.
 * `allowed` is the safe-class row.
 */
export type RerouteCondition =
  | 'allowed'
  | 'not_reroutable'
  | 'not_routed'
  | 'no_fallback_route'
  | 'ambiguous_intent'
  | 'policy_sensitive'
  | 'privilege_escalation'
  | 'local_to_remote'
  | 'weaker_constraints'
  | 'reroute_limit';

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
  | { readonly kind: 'completed' };

/** What the run does next. `status` is what every view and `run --json` reports. */
export type Ending =
  | { readonly kind: 'reroute'; readonly decision: DecisionRecord }
  | { readonly kind: 'pause'; readonly decision: DecisionRecord; readonly pauseClass: PauseClass }
  | { readonly kind: 'stop'; readonly decision: DecisionRecord; readonly status: 'stopped' | 'guardrail_stopped' }
  | { readonly kind: 'complete'; readonly decision: DecisionRecord }
  | { readonly kind: 'invalid'; readonly decision: DecisionRecord };

type Outcome = 'reroute' | 'pause' | 'stop' | 'sealed_stop' | 'guardrail_stop' | 'complete' | 'invalid';

/** One row: for this cause, on these calls, this outcome at this layer with this reason. */
export interface PolicyRow {
  /** The cause, e.g. `route_failed:privilege_escalation`, `reply_unreadable`, `gate`. */
  readonly cause: string;
  /** The calls the row applies to; `every` is every column. */
  readonly calls: readonly Call[] | 'every';
  readonly outcome: Outcome;
  readonly layer: Layer;
  /** The reason code, or `from_event` where the event carries it (a gate's, a failure's). */
  readonly reason: ReasonCode | 'from_event';
  /** For pauses: what it counts for. */
  readonly pauseClass?: PauseClass;
  /** Where the rule comes from, for people reading the table. */
  readonly source: string;
}

const EVERY = 'every' as const;
const STRUCTURED_VERDICTS: readonly Call[] = ['verdict', 'assessment', 'review'];

/**
 * The table. Rows are looked up in order; the first whose cause and call match decides. Seed 000's
 * REROUTE table is the `route_failed:*` rows; the sealing rules are the `sealed_stop` rows; the
 * pause classes are the `pauseClass` column.
 */
export const POLICY_TABLE: readonly PolicyRow[] = [
  // Seed 000, REROUTE: only a safe-class task with same-or-lower privileges and same-or-stronger constraints reroutes.
  {
    cause: 'route_failed:allowed',
    calls: EVERY,
    outcome: 'reroute',
    layer: 'reroute',
    reason: 'from_event',
    source: 'seed 000: safe class + same-or-lower privileges + same-or-stronger constraints → REROUTE',
  },
  {
    cause: 'route_failed:privilege_escalation',
    calls: EVERY,
    outcome: 'sealed_stop',
    layer: 'acc',
    reason: 'ACC_PRIVILEGE_ESCALATION',
    source: 'seed 000: candidate has higher privileges → STOPPED (sealed: policy.md)',
  },
  {
    cause: 'route_failed:local_to_remote',
    calls: EVERY,
    outcome: 'sealed_stop',
    layer: 'acc',
    reason: 'ACC_PRIVILEGE_ESCALATION',
    source: 'policy.md: never local → remote (data would leave the machine)',
  },
  {
    cause: 'route_failed:weaker_constraints',
    calls: EVERY,
    outcome: 'stop',
    layer: 'reroute',
    reason: 'REROUTE_WEAKER_CONSTRAINTS',
    source: 'seed 000: candidate cannot enforce same-or-stronger constraints → STOPPED',
  },
  {
    cause: 'route_failed:ambiguous_intent',
    calls: EVERY,
    outcome: 'pause',
    layer: 'reroute',
    reason: 'REROUTE_NOT_ALLOWED',
    pauseClass: 'outage',
    source: 'seed 000: undefined spec / ambiguous intent → PAUSE_FOR_HITL',
  },
  {
    cause: 'route_failed:policy_sensitive',
    calls: EVERY,
    outcome: 'pause',
    layer: 'reroute',
    reason: 'REROUTE_NOT_ALLOWED',
    pauseClass: 'outage',
    source: 'seed 000: policy-sensitive category (PII, secrets, high stakes) → PAUSE_FOR_HITL',
  },
  {
    cause: 'route_failed:reroute_limit',
    calls: EVERY,
    outcome: 'pause',
    layer: 'reroute',
    reason: 'REROUTE_NOT_ALLOWED',
    pauseClass: 'outage',
    source: 'seed 000: REROUTE count exceeds limit → PAUSE_FOR_HITL',
  },
  {
    cause: 'route_failed:no_fallback_route',
    calls: EVERY,
    outcome: 'pause',
    layer: 'reroute',
    reason: 'REROUTE_NOT_ALLOWED',
    pauseClass: 'outage',
    source: 'a route that did not answer and has nowhere to go: a person looks',
  },
  {
    cause: 'route_failed:not_routed',
    calls: EVERY,
    outcome: 'pause',
    layer: 'model',
    reason: 'MODEL_CALL_FAILED',
    pauseClass: 'outage',
    source: 'one client serves every persona (a replay, a test model): no REROUTE to weigh, a person looks',
  },
  {
    cause: 'route_failed:not_reroutable',
    calls: EVERY,
    outcome: 'pause',
    layer: 'model',
    reason: 'from_event',
    pauseClass: 'outage',
    source: 'quota, credentials, a refused request: never rerouted, a person fixes the route',
  },
  // A model that answered unreadably after its retry is an outage, on whichever call: never the council's doubt.
  {
    cause: 'reply_unreadable',
    calls: ['classify'],
    outcome: 'pause',
    layer: 'model',
    reason: 'MEDIATOR_CLASSIFICATION_FAILED',
    pauseClass: 'outage',
    source: 'policy.md: unreadable after its retry → outage',
  },
  {
    cause: 'reply_unreadable',
    calls: ['decision'],
    outcome: 'pause',
    layer: 'model',
    reason: 'SUPERVISOR_DECISION_INVALID',
    pauseClass: 'outage',
    source: 'policy.md: unreadable after its retry → outage',
  },
  {
    cause: 'reply_unreadable',
    calls: STRUCTURED_VERDICTS,
    outcome: 'pause',
    layer: 'arbitration',
    reason: 'ARBITRATION_VERDICTS_UNREADABLE',
    pauseClass: 'outage',
    source: 'policy.md: unreadable after its retry → outage',
  },
  {
    cause: 'reply_unreadable',
    calls: EVERY,
    outcome: 'pause',
    layer: 'model',
    reason: 'MODEL_REPLY_UNREADABLE',
    pauseClass: 'outage',
    source: 'policy.md: unreadable after its retry → outage',
  },
  // Gates: their own decision stands; what a pause counts for comes from its cause.
  {
    cause: 'gate:setup',
    calls: EVERY,
    outcome: 'pause',
    layer: 'meaning',
    reason: 'from_event',
    pauseClass: 'setup',
    source: 'policy.md: an unknown persona, a missing input → setup',
  },
  {
    cause: 'gate:sealed',
    calls: EVERY,
    outcome: 'sealed_stop',
    layer: 'ethics',
    reason: 'from_event',
    source: 'policy.md: ethics and acc seal (secrets, PII by default, path escapes, the terminal guard)',
  },
  {
    cause: 'gate:pause',
    calls: EVERY,
    outcome: 'pause',
    layer: 'ethics',
    reason: 'from_event',
    pauseClass: 'judgement',
    source: 'policy.md: a gate that judges the task → judgement',
  },
  {
    cause: 'council_doubt',
    calls: EVERY,
    outcome: 'pause',
    layer: 'arbitration',
    reason: 'from_event',
    pauseClass: 'judgement',
    source: 'policy.md: a readable verdict → judgement',
  },
  {
    cause: 'budget_exceeded',
    calls: EVERY,
    outcome: 'pause',
    layer: 'model',
    reason: 'BUDGET_EXCEEDED',
    pauseClass: 'judgement',
    source: 'policy.md: a budget → judgement',
  },
  {
    cause: 'guardrail',
    calls: EVERY,
    outcome: 'guardrail_stop',
    layer: 'deliberation',
    reason: 'from_event',
    source: 'seed 002: default stop behaviour explicit and observable (guardrail_stop)',
  },
  {
    cause: 'loop_limit',
    calls: EVERY,
    outcome: 'sealed_stop',
    layer: 'acc',
    reason: 'ACC_END_SESSION_AFTER_4_HITL',
    source: 'seed 000 Stage 3: the fourth pause of a conflict',
  },
  {
    cause: 'setup_invalid',
    calls: EVERY,
    outcome: 'invalid',
    layer: 'meaning',
    reason: 'SPEC_INVALID_INPUT',
    source: 'DESIGN: broken persona or route files, nothing runs',
  },
  {
    cause: 'person_stop',
    calls: EVERY,
    outcome: 'stop',
    layer: 'hitl',
    reason: 'HITL_STOP',
    source: 'policy.md: stop ends the run as STOPPED (USER)',
  },
  { cause: 'completed', calls: EVERY, outcome: 'complete', layer: 'dispatch', reason: 'RUN_COMPLETED', source: 'the council proceeded' },
];

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
