import { z } from 'zod';
import { compareCodeUnits } from './ordering.js';
import { SpecInvalidError } from './spec-invalid-error.js';

/** The decisions this module emits. There is no `RUN` here: the loop policy only pauses, recommends or stops. */
export const LOOP_DECISIONS = ['PAUSE_FOR_HITL', 'STOPPED', 'END_SESSION_RECOMMENDED'] as const;

/** The plan-flow kinds: they pair with `PAUSE_FOR_HITL` and never count. */
export const PLAN_KINDS = ['K_PLAN_REQUESTED', 'K_PLAN_REQ_DISPATCH', 'K_PLAN_PROPOSED', 'K_PLAN_RECEIVED'] as const;

/**
 * The 7 event kinds. `K_HITL_PAUSE` is the only kind that counts towards the HITL budget.
 * Kind values must never equal a decision value (checked when this module is imported).
 */
export const LOOP_KINDS = ['K_HITL_PAUSE', ...PLAN_KINDS, 'K_END_RECOMMENDED', 'K_STOPPED'] as const;
export const LoopKind = z.enum(LOOP_KINDS);
export type LoopKind = z.infer<typeof LoopKind>;

/** The layers that emit loop-policy events. */
export const LOOP_LAYERS = ['mediation', 'acc_gate', 'maestro'] as const;
export const LoopLayer = z.enum(LOOP_LAYERS);
export type LoopLayer = z.infer<typeof LoopLayer>;

/** The two codes of the fixed fail-closed response. */
export const FAIL_CLOSED_REASON_CODES = ['SPEC_INVALID_INPUT', 'SPEC_MISSING_KEYS'] as const;
export const FailClosedReasonCode = z.enum(FAIL_CLOSED_REASON_CODES);
export type FailClosedReasonCode = z.infer<typeof FailClosedReasonCode>;

/** Every reason code this module emits. */
export const LOOP_REASON_CODES = [
  ...FAIL_CLOSED_REASON_CODES,
  // Counter: the plan request at `plan_request_round`.
  'REL_PLAN_REQUESTED_AFTER_3_HITL',
  // Counter: the end recommendation at `hitl_max_rounds`.
  'ACC_LOOP_BUDGET_EXCEEDED',
  'MAESTRO_PLAN_REQUEST_DISPATCHED',
  'MEDIATION_PLAN_PROPOSED',
  'MAESTRO_PLAN_RECEIVED',
  // The sealed stop.
  'ACC_END_SESSION_AFTER_4_HITL',
  // The terminal guard.
  'ACC_STOPPED_IS_TERMINAL',
] as const;
export const LoopReasonCode = z.enum(LOOP_REASON_CODES);
export type LoopReasonCode = z.infer<typeof LoopReasonCode>;

/** The only final decider of loop-policy events. */
export const FINAL_SYSTEM = 'SYSTEM';

/**
 * Throws `SpecInvalidError` when a kind value equals a decision value. Runs on the real
 * vocabularies at import time; exported so the check itself can be tested.
 */
export function assertKindsDisjointFromDecisions(kinds: readonly string[], decisions: readonly string[]): void {
  const decisionSet = new Set(decisions);
  const collisions = [...new Set(kinds.filter((k) => decisionSet.has(k)))].sort(compareCodeUnits);
  if (collisions.length > 0) {
    throw new SpecInvalidError(`SPEC_INVALID: kind values collide with Decision values: ${JSON.stringify(collisions)}`);
  }
}

assertKindsDisjointFromDecisions(LOOP_KINDS, LOOP_DECISIONS);
