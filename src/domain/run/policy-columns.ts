import type { CallPurpose } from '../chat.js';
import type { ReasonCode } from '../codes.js';
import type { Layer } from '../decision.js';

/** The columns and cause vocabulary of the run's policy table (policy-table.ts); policy.ts decides with it. */

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

/** What a row makes of its cause (decideRun turns it into an Ending). */
export type Outcome =
  | 'reroute'
  | 'pause'
  | 'stop'
  | 'sealed_stop'
  | 'guardrail_stop'
  | 'complete'
  | 'invalid'
  | 'fail'
  | 'fail_resumable'
  | 'interrupt'
  | 'not_run';

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

export const EVERY = 'every' as const;
