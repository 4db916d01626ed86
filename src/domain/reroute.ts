import type { DecisionRecord } from './decision.js';
import { pauseDecision, sealedStopDecision } from './decision.js';
import type { LlmErrorKind } from './errors.js';
import type { ResolvedRoute } from './route.js';

/** Why a failed call may be rerouted; other failures (quota, auth, bad request) pause at once. */
export const REROUTE_REASONS: Partial<Record<LlmErrorKind, string>> = {
  timeout: 'MODEL_TIMEOUT',
  rate_limit: 'MODEL_RATE_LIMITED',
  server: 'MODEL_SERVER_ERROR',
  network: 'MODEL_UNREACHABLE',
  invalid_output: 'MODEL_INVALID_OUTPUT',
};

export interface RerouteInput {
  readonly failure: LlmErrorKind;
  readonly original: ResolvedRoute;
  readonly candidate: ResolvedRoute | undefined;
  readonly rerouteCount: number;
  readonly maxReroute: number;
  /** The command carries a policy-sensitive flag (PII, secrets, high stakes): never reroute. */
  readonly policySensitive: boolean;
}

export interface RerouteOutcome {
  readonly decision: DecisionRecord;
  /** The failed condition when refused, for people and the audit log. */
  readonly condition?: 'not_reroutable' | 'no_fallback_route' | 'policy_sensitive' | 'privilege_escalation' | 'local_to_remote' | 'weaker_constraints' | 'reroute_limit';
  readonly detail: string;
}

/**
 * The REROUTE table of policy.md: allowed only for a safe task, to a route with the same or fewer
 * privileges (never local → remote) and the same or stronger constraints, under `max_reroute`.
 * A privilege escalation is a sealed stop; every other refusal pauses for a person.
 */
export function decideReroute(input: RerouteInput): RerouteOutcome {
  const { original, candidate } = input;
  const reason = REROUTE_REASONS[input.failure];
  const refuse = (condition: NonNullable<RerouteOutcome['condition']>, detail: string): RerouteOutcome => ({
    decision: pauseDecision('reroute', 'REROUTE_NOT_ALLOWED'),
    condition,
    detail,
  });
  if (!reason) return refuse('not_reroutable', `a ${input.failure} failure is not rerouted; a person must look`);
  if (!candidate) return refuse('no_fallback_route', `route "${original.id}" failed (${reason}) and the persona has no fallback_route`);
  if (input.policySensitive) return refuse('policy_sensitive', 'the task carries a policy-sensitive flag; it is never rerouted');
  if (original.locality === 'local' && candidate.locality === 'remote') {
    return {
      decision: sealedStopDecision('acc', 'ACC_PRIVILEGE_ESCALATION'),
      condition: 'local_to_remote',
      detail: `fallback "${candidate.id}" is remote but "${original.id}" is local: data would leave the machine`,
    };
  }
  const extra = candidate.privileges.filter((p) => !original.privileges.includes(p));
  if (extra.length > 0) {
    return {
      decision: sealedStopDecision('acc', 'ACC_PRIVILEGE_ESCALATION'),
      condition: 'privilege_escalation',
      detail: `fallback "${candidate.id}" grants ${extra.join(', ')} which "${original.id}" does not`,
    };
  }
  const weaker: string[] = [];
  if (original.max_output_tokens !== undefined && (candidate.max_output_tokens === undefined || candidate.max_output_tokens > original.max_output_tokens)) {
    weaker.push('max_output_tokens');
  }
  if (original.temperature !== undefined && (candidate.temperature === undefined || candidate.temperature > original.temperature)) weaker.push('temperature');
  if (candidate.timeout_ms > original.timeout_ms) weaker.push('timeout_ms');
  if (weaker.length > 0) return refuse('weaker_constraints', `fallback "${candidate.id}" has weaker constraints: ${weaker.join(', ')}`);
  if (input.rerouteCount >= input.maxReroute) {
    return refuse('reroute_limit', `the run has already rerouted ${input.rerouteCount} time(s) (max_reroute ${input.maxReroute})`);
  }
  return {
    decision: { decision: 'REROUTE', reason_code: reason, sealed: false, overrideable: false, final_decider: 'SYSTEM', layer: 'reroute' },
    detail: `route "${original.id}" failed (${reason}); rerouting to "${candidate.id}"`,
  };
}
