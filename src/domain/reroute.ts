import type { DecisionRecord } from './decision.js';
import type { LlmErrorKind } from './errors.js';
import type { ResolvedRoute } from './route.js';
import { decideRun, decidingCondition, failureReason, REROUTABLE_FAILURES, type Call, type RerouteCondition } from './run/policy.js';

/** Why a failed call may be rerouted (the rest — quota, auth, a refused request — pause at once). */
export const REROUTE_REASONS: Partial<Record<LlmErrorKind, string>> = Object.fromEntries(
  [...REROUTABLE_FAILURES].map((k) => [k, failureReason(k)]),
);

export interface RerouteInput {
  readonly failure: LlmErrorKind;
  readonly original: ResolvedRoute;
  readonly candidate: ResolvedRoute | undefined;
  readonly rerouteCount: number;
  readonly maxReroute: number;
  /** The task is in a policy-sensitive category (PII, secrets, high stakes, external side effects): never reroute. */
  readonly policySensitive: boolean;
  /** The task's intent is underspecified or ambiguous: never reroute. */
  readonly ambiguous?: boolean;
  /** The call that failed (a column of the policy table); the decision is the same on every call. */
  readonly call?: Call;
}

export interface RerouteOutcome {
  readonly decision: DecisionRecord;
  /** The deciding condition when refused (the most severe of those that hold). */
  readonly condition?: Exclude<RerouteCondition, 'allowed'>;
  /** Every condition that failed, for the audit log. */
  readonly failed: readonly Exclude<RerouteCondition, 'allowed'>[];
  readonly detail: string;
}

/**
 * The constraints a fallback must enforce the same or more strictly: a lower or equal output cap,
 * temperature ceiling and timeout. A route without a cap where the original had one is weaker.
 */
export function weakerConstraints(original: ResolvedRoute, candidate: ResolvedRoute): string[] {
  const weaker: string[] = [];
  const looser = (a: number | undefined, b: number | undefined): boolean => a !== undefined && (b === undefined || b > a);
  if (looser(original.max_output_tokens, candidate.max_output_tokens)) weaker.push('max_output_tokens');
  if (looser(original.temperature, candidate.temperature)) weaker.push('temperature');
  if (candidate.timeout_ms > original.timeout_ms) weaker.push('timeout_ms');
  return weaker;
}

type Held = { condition: Exclude<RerouteCondition, 'allowed'>; detail: string };

/** Every row of seed 000's REROUTE table that refuses this reroute, with why, for people. */
export function refusedConditions(input: RerouteInput): Held[] {
  const { original, candidate } = input;
  const reason = failureReason(input.failure);
  if (!REROUTABLE_FAILURES.has(input.failure))
    return [{ condition: 'not_reroutable', detail: `a ${input.failure} failure is not rerouted; a person must look` }];
  if (!candidate)
    return [{ condition: 'no_fallback_route', detail: `route "${original.id}" failed (${reason}) and the persona has no fallback_route` }];
  const held: Held[] = [];
  if (input.ambiguous) held.push({ condition: 'ambiguous_intent', detail: "the task's intent is underspecified; it is never rerouted" });
  if (input.policySensitive)
    held.push({
      condition: 'policy_sensitive',
      detail: 'the task is in a policy-sensitive category (personal data, secrets, high stakes, external effects); it is never rerouted',
    });
  if (original.locality === 'local' && candidate.locality === 'remote') {
    held.push({
      condition: 'local_to_remote',
      detail: `fallback "${candidate.id}" is remote but "${original.id}" is local: data would leave the machine`,
    });
  }
  const extra = candidate.privileges.filter((p) => !original.privileges.includes(p));
  if (extra.length > 0)
    held.push({
      condition: 'privilege_escalation',
      detail: `fallback "${candidate.id}" grants ${extra.join(', ')} which "${original.id}" does not`,
    });
  const weaker = weakerConstraints(original, candidate);
  if (weaker.length > 0)
    held.push({
      condition: 'weaker_constraints',
      detail: `fallback "${candidate.id}" cannot enforce "${original.id}"'s constraints: ${weaker.join(', ')}`,
    });
  if (input.rerouteCount >= input.maxReroute) {
    held.push({
      condition: 'reroute_limit',
      detail: `the run has already rerouted ${input.rerouteCount} time(s) (max_reroute ${input.maxReroute})`,
    });
  }
  return held;
}

/**
 * Seed 000's REROUTE table, decided through the run's one policy table: allowed only for a safe
 * task, to a route with the same or fewer privileges (never local → remote) and the same or
 * stronger constraints, under `max_reroute`. When several rows refuse, the strictest decides.
 */
export function decideReroute(input: RerouteInput): RerouteOutcome {
  const held = refusedConditions(input);
  const condition = decidingCondition(held.map((h) => h.condition));
  const ending = decideRun({ kind: 'route_failed', call: input.call ?? 'turn', failure: input.failure, condition });
  if (condition === 'allowed') {
    return {
      decision: ending.decision,
      failed: [],
      detail: `route "${input.original.id}" failed (${failureReason(input.failure)}); rerouting to "${input.candidate?.id}"`,
    };
  }
  const deciding = held.find((h) => h.condition === condition);
  return {
    decision: ending.decision,
    condition,
    failed: held.map((h) => h.condition),
    detail: [deciding, ...held.filter((h) => h !== deciding)].map((h) => h?.detail).join('; '),
  };
}

/**
 * What a refused REROUTE does to the run, for people, read off the policy table's decision (never a
 * second copy of it): a stop, sealed or not, or a pause for a person, with its reason code.
 */
export function refusedRerouteEffect(decision: DecisionRecord): string {
  if (decision.decision === 'STOPPED')
    return decision.sealed
      ? `stops the run instead (STOPPED, sealed: ${decision.reason_code}; it cannot be continued)`
      : `stops the run instead (STOPPED, not sealed: ${decision.reason_code}; fix the route and run again)`;
  if (decision.decision === 'PAUSE_FOR_HITL') return `pauses the run for a person instead (${decision.reason_code})`;
  return `ends in ${decision.decision} (${decision.reason_code})`;
}
