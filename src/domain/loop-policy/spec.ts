import { z } from 'zod';
import { SpecInvalidError } from './spec-invalid-error.js';

/** The HITL budget. Frozen; build it with `createLoopPolicySpec`, which validates. */
export interface LoopPolicySpec {
  /** The pause count at which ending the session is recommended (default 4). */
  readonly hitl_max_rounds: number;
  /** The pause count at which a plan is requested (default 3); `1 <= plan_request_round < hitl_max_rounds`. */
  readonly plan_request_round: number;
  /** Declarative: counts are kept per `"{session_id}|{conflict_fingerprint}"`. */
  readonly counter_key_format: 'session_id|conflict_fingerprint';
}

/**
 * Validates and freezes a loop-policy spec; omitted fields take the defaults (4, 3).
 * Throws `SpecInvalidError` with the reference's messages, checked in the reference's order.
 */
export function createLoopPolicySpec(input: { hitl_max_rounds?: number; plan_request_round?: number } = {}): LoopPolicySpec {
  const hitlMaxRounds = input.hitl_max_rounds ?? 4;
  const planRequestRound = input.plan_request_round ?? 3;
  // Not in the Python reference (its ints are typed): counts are compared with `===`, so a
  // fractional or NaN threshold would silently never fire.
  if (!Number.isInteger(hitlMaxRounds) || !Number.isInteger(planRequestRound)) {
    throw new SpecInvalidError('SPEC_INVALID: hitl_max_rounds and plan_request_round must be integers');
  }
  if (hitlMaxRounds < 1) {
    throw new SpecInvalidError('SPEC_INVALID: hitl_max_rounds must be >= 1');
  }
  if (!(planRequestRound >= 1 && planRequestRound < hitlMaxRounds)) {
    throw new SpecInvalidError('SPEC_INVALID: require 1 <= plan_request_round < hitl_max_rounds');
  }
  return Object.freeze({
    hitl_max_rounds: hitlMaxRounds,
    plan_request_round: planRequestRound,
    counter_key_format: 'session_id|conflict_fingerprint',
  });
}

/** The default budget: a plan is requested at the 3rd pause, ending is recommended at the 4th. */
export const DEFAULT_LOOP_POLICY_SPEC: LoopPolicySpec = createLoopPolicySpec();

/** Why a counter may be reset. `explicit_new_session_start` is the only one that overrides the same-conflict rule. */
export const RESET_REASONS = [
  'conflict_fingerprint_change',
  'explicit_new_session_start',
  'user_provides_required_info_for_blocking_fields',
] as const;
export const ResetReason = z.enum(RESET_REASONS);
export type ResetReason = z.infer<typeof ResetReason>;

/** When the counter may be reset. */
export interface ResetRulesSpec {
  /** Reasons that reset the old conflict's count when the fingerprint changes. */
  readonly reset_on: readonly ResetReason[];
  /** A reset with `old_fp === new_fp` is a no-op (unless it is an explicit new session). */
  readonly never_reset_within_same_conflict: boolean;
}

export const DEFAULT_RESET_RULES: ResetRulesSpec = Object.freeze({
  reset_on: Object.freeze([...RESET_REASONS]),
  never_reset_within_same_conflict: true,
});
