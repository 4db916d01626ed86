import { z } from 'zod';
import {
  conflictKeyOf,
  deriveLoopEvent,
  validateKindDecisionPairing,
  validateMinKeys,
  type LoopEvent,
  type LoopEventInput,
} from './events.js';
import { DEFAULT_LOOP_POLICY_SPEC, DEFAULT_RESET_RULES, type LoopPolicySpec, type ResetRulesSpec } from './spec.js';
import { compareCodeUnits, sortedMembers, StringSet } from './ordering.js';

/** What one event did to the counter. */
export interface CounterResult {
  /** The count for the event's conflict key after the event (0 when the event lacks keys). */
  readonly count: number;
  /** `K_PLAN_REQUESTED`, emitted once per conflict key when the count reaches `plan_request_round`. */
  readonly planRequested: LoopEvent | null;
  /** `K_END_RECOMMENDED`, emitted once per conflict key when the count reaches `hitl_max_rounds`. */
  readonly endRecommended: LoopEvent | null;
}

export interface HitlCounterOptions {
  readonly spec?: LoopPolicySpec;
}

/** The counter as plain data, for the workspace. Every list is sorted, so equal counters serialize identically. */
export const HitlCounterSnapshot = z.strictObject({
  schemaVersion: z.literal(1),
  /** HITL pauses counted per conflict key (`"{session_id}|{conflict_fingerprint}"`). */
  counts: z
    .array(z.strictObject({ conflict_key: z.string().min(1), count: z.number().int().min(1) }))
    .refine((cs) => new Set(cs.map((c) => c.conflict_key)).size === cs.length, 'must not repeat a conflict_key'),
  /** Conflict keys whose plan request was already emitted. */
  plan_requested_keys: StringSet,
  /** Conflict keys whose end recommendation was already emitted. */
  end_recommended_keys: StringSet,
  /** Dedupe ids (`"{session_id}|{fp}|{event_id}"`) already counted, bucketed by session. */
  seen: z
    .array(z.strictObject({ session_id: z.string().min(1), dedupe_ids: StringSet }))
    .refine((bs) => new Set(bs.map((b) => b.session_id)).size === bs.length, 'must not repeat a session_id'),
});
export type HitlCounterSnapshot = z.infer<typeof HitlCounterSnapshot>;

/**
 * Counts HITL pauses per conflict and fires the two thresholds once each. Only `K_HITL_PAUSE`
 * counts; a replayed `event_id` never counts twice. Mutable; persist it with `toSnapshot()`.
 */
export class HitlCounter {
  readonly spec: LoopPolicySpec;
  readonly resetRules: ResetRulesSpec;
  private readonly counts = new Map<string, number>();
  private readonly planRequested = new Set<string>();
  private readonly endRecommended = new Set<string>();
  /** session_id → dedupe ids; explicit new session drops a whole bucket. */
  private readonly seen = new Map<string, Set<string>>();

  constructor(options: HitlCounterOptions = {}) {
    this.spec = options.spec ?? DEFAULT_LOOP_POLICY_SPEC;
    this.resetRules = DEFAULT_RESET_RULES;
  }

  /** The current count for a conflict (0 when none). */
  countFor(sessionId: string, conflictFingerprint: string): number {
    return this.counts.get(conflictKeyOf({ session_id: sessionId, conflict_fingerprint: conflictFingerprint })) ?? 0;
  }

  /**
   * Feeds one event. In order: missing keys → count 0, no side effect (the counter never fails
   * closed); not `K_HITL_PAUSE` → current count; already seen in this session → current count;
   * otherwise count it, then emit at exactly `plan_request_round` and exactly `hitl_max_rounds`
   * (once per conflict key). The input's kind/decision pairing is deliberately not checked.
   */
  maybeIncrementAndEmit(e: LoopEventInput): CounterResult {
    if (!validateMinKeys(e)) return { count: 0, planRequested: null, endRecommended: null };
    const ck = conflictKeyOf(e);
    if (e.kind !== 'K_HITL_PAUSE') return { count: this.counts.get(ck) ?? 0, planRequested: null, endRecommended: null };

    const dedupeId = `${e.session_id}|${e.conflict_fingerprint}|${e.event_id}`;
    let bucket = this.seen.get(e.session_id);
    if (bucket?.has(dedupeId)) return { count: this.counts.get(ck) ?? 0, planRequested: null, endRecommended: null };
    if (bucket === undefined) {
      bucket = new Set();
      this.seen.set(e.session_id, bucket);
    }
    bucket.add(dedupeId);
    const n = (this.counts.get(ck) ?? 0) + 1;
    this.counts.set(ck, n);

    let planRequested: LoopEvent | null = null;
    if (n === this.spec.plan_request_round && !this.planRequested.has(ck)) {
      this.planRequested.add(ck);
      planRequested = keepIfPaired(
        deriveLoopEvent(e, 'plan_requested', {
          layer: 'mediation',
          decision: 'PAUSE_FOR_HITL',
          kind: 'K_PLAN_REQUESTED',
          reason_code: 'REL_PLAN_REQUESTED_AFTER_3_HITL',
          sealed: false,
          overrideable: true,
          payload: null,
        }),
      );
    }
    let endRecommended: LoopEvent | null = null;
    if (n === this.spec.hitl_max_rounds && !this.endRecommended.has(ck)) {
      this.endRecommended.add(ck);
      endRecommended = keepIfPaired(
        deriveLoopEvent(e, 'end_recommended', {
          layer: 'acc_gate',
          decision: 'END_SESSION_RECOMMENDED',
          kind: 'K_END_RECOMMENDED',
          reason_code: 'ACC_LOOP_BUDGET_EXCEEDED',
          sealed: false,
          overrideable: true,
          payload: null,
        }),
      );
    }
    return { count: n, planRequested, endRecommended };
  }

  /**
   * Applies a reset, rules in order: `explicit_new_session_start` clears everything of the
   * session (counts, both threshold flags, the dedupe bucket); same fingerprint → no-op; reason not
   * in `reset_on` → no-op; otherwise clears the count and flags of the OLD conflict only, keeping
   * the dedupe bucket (a replayed event id stays seen). Returns whether anything was reset.
   */
  resetIfAllowed(sessionId: string, oldFp: string, newFp: string, resetReason: string): boolean {
    if (resetReason === 'explicit_new_session_start') {
      this.seen.delete(sessionId);
      const prefix = `${sessionId}|`;
      for (const key of this.counts.keys()) if (key.startsWith(prefix)) this.counts.delete(key);
      for (const key of this.planRequested) if (key.startsWith(prefix)) this.planRequested.delete(key);
      for (const key of this.endRecommended) if (key.startsWith(prefix)) this.endRecommended.delete(key);
      return true;
    }
    if (this.resetRules.never_reset_within_same_conflict && oldFp === newFp) return false;
    if (!(this.resetRules.reset_on as readonly string[]).includes(resetReason)) return false;
    const oldKey = conflictKeyOf({ session_id: sessionId, conflict_fingerprint: oldFp });
    this.counts.delete(oldKey);
    this.planRequested.delete(oldKey);
    this.endRecommended.delete(oldKey);
    return true;
  }

  /** The counter as sorted plain data (spec and reset rules are configuration, not state). */
  toSnapshot(): HitlCounterSnapshot {
    return {
      schemaVersion: 1,
      counts: [...this.counts.entries()]
        .sort(([a], [b]) => compareCodeUnits(a, b))
        .map(([conflict_key, count]) => ({ conflict_key, count })),
      plan_requested_keys: sortedMembers(this.planRequested),
      end_recommended_keys: sortedMembers(this.endRecommended),
      seen: [...this.seen.entries()]
        .sort(([a], [b]) => compareCodeUnits(a, b))
        .map(([session_id, ids]) => ({ session_id, dedupe_ids: sortedMembers(ids) })),
    };
  }

  /** Restores a counter from a validated snapshot; it then counts and dedupes as the original would. */
  static fromSnapshot(snapshot: HitlCounterSnapshot): HitlCounter {
    const counter = new HitlCounter();
    for (const { conflict_key, count } of snapshot.counts) counter.counts.set(conflict_key, count);
    for (const key of snapshot.plan_requested_keys) counter.planRequested.add(key);
    for (const key of snapshot.end_recommended_keys) counter.endRecommended.add(key);
    for (const { session_id, dedupe_ids } of snapshot.seen) counter.seen.set(session_id, new Set(dedupe_ids));
    return counter;
  }
}

/** The no-op insurance of the reference: an emission that fails the pairing check is dropped, never replaced. */
function keepIfPaired(e: LoopEvent): LoopEvent | null {
  return validateKindDecisionPairing(e) ? e : null;
}
