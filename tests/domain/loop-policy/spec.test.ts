import { describe, expect, it } from 'vitest';
import { createLoopPolicySpec, DEFAULT_LOOP_POLICY_SPEC, DEFAULT_RESET_RULES } from '../../../src/domain/loop-policy/spec.js';
import { SpecInvalidError } from '../../../src/domain/loop-policy/spec-invalid-error.js';

const FIRST = 'SPEC_INVALID: hitl_max_rounds must be >= 1';
const SECOND = 'SPEC_INVALID: require 1 <= plan_request_round < hitl_max_rounds';

describe('createLoopPolicySpec', () => {
  it('defaults to (4, 3) keyed by session|fingerprint, frozen', () => {
    expect(DEFAULT_LOOP_POLICY_SPEC).toEqual({
      hitl_max_rounds: 4,
      plan_request_round: 3,
      counter_key_format: 'session_id|conflict_fingerprint',
    });
    expect(Object.isFrozen(DEFAULT_LOOP_POLICY_SPEC)).toBe(true);
  });

  // Section 1.2 [derived] vectors: (hitl_max_rounds, plan_request_round).
  it.each([
    { max: 0, plan: 0, error: FIRST },
    { max: 4, plan: 4, error: SECOND },
    { max: 4, plan: 0, error: SECOND },
    { max: 1, plan: 1, error: SECOND },
    { max: 2, plan: 1, error: null },
    { max: 5, plan: 3, error: null },
    // Beyond the reference: thresholds are compared with ===, so they must be integers.
    { max: 4.5, plan: 3, error: 'SPEC_INVALID: hitl_max_rounds and plan_request_round must be integers' },
    { max: 4, plan: Number.NaN, error: 'SPEC_INVALID: hitl_max_rounds and plan_request_round must be integers' },
  ])('($max, $plan) → $error', ({ max, plan, error }) => {
    const build = () => createLoopPolicySpec({ hitl_max_rounds: max, plan_request_round: plan });
    if (error === null) {
      expect(build()).toMatchObject({ hitl_max_rounds: max, plan_request_round: plan });
    } else {
      expect(build).toThrow(SpecInvalidError);
      expect(build).toThrow(error);
    }
  });

  it('applies the default for an omitted field before validating', () => {
    expect(() => createLoopPolicySpec({ hitl_max_rounds: 3 })).toThrow(SECOND);
    expect(createLoopPolicySpec({ plan_request_round: 2 })).toMatchObject({ hitl_max_rounds: 4, plan_request_round: 2 });
  });

  it('carries the SPEC_INVALID code', () => {
    try {
      createLoopPolicySpec({ hitl_max_rounds: 0 });
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ code: 'SPEC_INVALID', name: 'SpecInvalidError' });
    }
  });
});

describe('reset rules', () => {
  it('resets on the three reasons and never within the same conflict', () => {
    expect(DEFAULT_RESET_RULES).toEqual({
      reset_on: ['conflict_fingerprint_change', 'explicit_new_session_start', 'user_provides_required_info_for_blocking_fields'],
      never_reset_within_same_conflict: true,
    });
  });
});
