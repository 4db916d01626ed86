import { z } from 'zod';
import { FINAL_SYSTEM, LoopReasonCode, LoopLayer, PLAN_KINDS, type FailClosedReasonCode, type LoopKind } from './vocabulary.js';

/**
 * An event as the loop policy receives it. Fields are plain strings because inputs come from
 * outside and may be wrong (an unknown kind, a kind paired with the wrong decision): the
 * functions of this module check them and fail closed, they never trust the type.
 */
export interface LoopEventInput {
  readonly event_id: string;
  /** Copied, never read: the policy takes no clock. */
  readonly timestamp: string;
  readonly session_id: string;
  readonly run_id: string;
  readonly layer: string;
  readonly decision: string;
  readonly kind: string;
  readonly reason_code: string;
  readonly conflict_fingerprint: string;
  readonly sealed: boolean;
  readonly overrideable: boolean;
  readonly final_decider: string;
  readonly payload: Readonly<Record<string, unknown>> | null;
}

const emittedFields = {
  event_id: z.string(),
  timestamp: z.string(),
  session_id: z.string(),
  run_id: z.string(),
  layer: LoopLayer,
  reason_code: LoopReasonCode,
  conflict_fingerprint: z.string(),
  final_decider: z.literal(FINAL_SYSTEM),
  payload: z.record(z.string(), z.unknown()).nullable(),
};

/**
 * An event this module emits, discriminated on `kind`. The schema encodes the pairing rules and
 * the sealing invariant: only `K_STOPPED` (the stop and the terminal guard) is sealed and not
 * overrideable; everything else, the fail-closed response included, pauses unsealed.
 */
export const LoopEvent = z.discriminatedUnion('kind', [
  z.strictObject({
    ...emittedFields,
    kind: z.literal(PLAN_KINDS),
    decision: z.literal('PAUSE_FOR_HITL'),
    sealed: z.literal(false),
    overrideable: z.literal(true),
  }),
  z.strictObject({
    ...emittedFields,
    kind: z.literal('K_END_RECOMMENDED'),
    decision: z.literal('END_SESSION_RECOMMENDED'),
    sealed: z.literal(false),
    overrideable: z.literal(true),
  }),
  z.strictObject({
    ...emittedFields,
    kind: z.literal('K_STOPPED'),
    decision: z.literal('STOPPED'),
    sealed: z.literal(true),
    overrideable: z.literal(false),
  }),
]);
export type LoopEvent = Readonly<z.infer<typeof LoopEvent>>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** What an emitter chooses; the rest is copied from the event that caused it. */
export type DerivedFields = DistributiveOmit<
  LoopEvent,
  'event_id' | 'timestamp' | 'session_id' | 'run_id' | 'conflict_fingerprint' | 'final_decider'
>;

/**
 * Builds an emitted event from its cause: `event_id` is `"{cause.event_id}::{suffix}"`, and the
 * timestamp, session, run and fingerprint are copied. The result is frozen.
 */
export function deriveLoopEvent(cause: LoopEventInput, suffix: string, fields: DerivedFields): LoopEvent {
  return freezeEvent({
    ...fields,
    event_id: `${cause.event_id}::${suffix}`,
    timestamp: cause.timestamp,
    session_id: cause.session_id,
    run_id: cause.run_id,
    conflict_fingerprint: cause.conflict_fingerprint,
    final_decider: FINAL_SYSTEM,
  });
}

/** The conflict key `"{session_id}|{conflict_fingerprint}"`: the scope of counts and one-shot sets. */
export function conflictKeyOf(e: Pick<LoopEventInput, 'session_id' | 'conflict_fingerprint'>): string {
  return `${e.session_id}|${e.conflict_fingerprint}`;
}

/** True when `session_id`, `conflict_fingerprint` and `event_id` are all non-empty (run and time are not checked). */
export function validateMinKeys(e: Pick<LoopEventInput, 'session_id' | 'conflict_fingerprint' | 'event_id'>): boolean {
  return Boolean(e.session_id) && Boolean(e.conflict_fingerprint) && Boolean(e.event_id);
}

const PAUSE_KINDS: ReadonlySet<string> = new Set<LoopKind>(['K_HITL_PAUSE', ...PLAN_KINDS]);

/**
 * True when the kind is known and paired with its decision: `K_END_RECOMMENDED` with
 * `END_SESSION_RECOMMENDED`, `K_STOPPED` with `STOPPED`, `K_HITL_PAUSE` and `K_PLAN_*` with
 * `PAUSE_FOR_HITL`. Any other kind is invalid.
 */
export function validateKindDecisionPairing(e: Pick<LoopEventInput, 'kind' | 'decision'>): boolean {
  if (e.kind === 'K_END_RECOMMENDED') return e.decision === 'END_SESSION_RECOMMENDED';
  if (e.kind === 'K_STOPPED') return e.decision === 'STOPPED';
  if (PAUSE_KINDS.has(e.kind)) return e.decision === 'PAUSE_FOR_HITL';
  return false;
}

/**
 * The fixed fail-closed response: an unsealed, overrideable `PAUSE_FOR_HITL` by SYSTEM. Its kind
 * is `K_PLAN_RECEIVED`, which pairs validly and never counts, so it cannot pollute the HITL count.
 * With a base it is `"{base.event_id}::fail_closed"` and records what it replaced; without one it
 * is the bare `"fail_closed"` with empty identifiers.
 */
export function failClosedEvent(base: LoopEventInput | null, reasonCode: FailClosedReasonCode, layer: LoopLayer): LoopEvent {
  const fields = {
    layer,
    decision: 'PAUSE_FOR_HITL',
    kind: 'K_PLAN_RECEIVED',
    reason_code: reasonCode,
    sealed: false,
    overrideable: true,
    final_decider: FINAL_SYSTEM,
  } as const;
  if (base === null) {
    return freezeEvent({
      ...fields,
      event_id: 'fail_closed',
      timestamp: '',
      session_id: '',
      run_id: '',
      conflict_fingerprint: '',
      payload: { note: 'fail-closed', original: null },
    });
  }
  return freezeEvent({
    ...fields,
    event_id: `${base.event_id}::fail_closed`,
    timestamp: base.timestamp,
    session_id: base.session_id,
    run_id: base.run_id,
    conflict_fingerprint: base.conflict_fingerprint,
    payload: {
      note: 'fail-closed',
      original_kind: base.kind,
      original_decision: base.decision,
      original_reason_code: base.reason_code,
    },
  });
}

function freezeEvent(e: LoopEvent): LoopEvent {
  if (e.payload !== null) Object.freeze(e.payload);
  return Object.freeze(e);
}
