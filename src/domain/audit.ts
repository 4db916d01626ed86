import { z } from 'zod';
import type { EventCode } from './codes.js';
import { Decision, FinalDecider, Layer, type DecisionRecord } from './decision.js';

/** 2: records carry `prev_hash` and `hash` (hash chain). Version 1 (the spine) had no chain. */
export const AUDIT_SCHEMA_VERSION = 2;

/** Lower-case hex SHA-256. */
export const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

/** Details are category-level signals only: digests, sizes, counts, ids, codes. Never raw text. */
export const AuditDetails = z.record(z.string(), z.unknown());
export type AuditDetails = z.infer<typeof AuditDetails>;

/**
 * The fields every record has before its details and its chain, in the order they are written. The
 * sanitizer must leave each exactly as it was; the chain writes them first, in this order.
 */
export const AUDIT_HEADER_FIELDS = [
  'v',
  'run_id',
  'seq',
  'ts',
  'event',
  'layer',
  'decision',
  'reason_code',
  'sealed',
  'overrideable',
  'final_decider',
] as const;

/** One line of `.maestro/audit/<run_id>.jsonl`. */
export const AuditRecord = z.strictObject({
  v: z.literal(AUDIT_SCHEMA_VERSION),
  run_id: z.string().min(1),
  seq: z.number().int().min(0),
  ts: z.string().min(1),
  event: z.string().regex(/^[A-Z][A-Z0-9_]*$/),
  layer: Layer,
  decision: Decision,
  reason_code: z.string().regex(/^[A-Z][A-Z0-9_]*$/),
  sealed: z.boolean(),
  overrideable: z.boolean(),
  final_decider: FinalDecider,
  details: AuditDetails.optional(),
  /** `hash` of the record before this one in the same file; GENESIS_HASH for the first. */
  prev_hash: Sha256Hex,
  /** SHA-256 of this record's canonical JSON without `hash` (see audit-chain.ts). */
  hash: Sha256Hex,
});
export type AuditRecord = z.infer<typeof AuditRecord>;

/** A record as built and sanitized, before it is linked into the chain. */
export const UnchainedAuditRecord = AuditRecord.omit({ prev_hash: true, hash: true });
export type UnchainedAuditRecord = z.infer<typeof UnchainedAuditRecord>;

/** Reason (and event) of the payload-free record written when a record could not be made safe. */
export const AUDIT_REDACTION_FAILED = 'AUDIT_REDACTION_FAILED';

/** What the app hands the audit sink; the sink adds run id, sequence number and time. */
export interface AuditEvent extends DecisionRecord {
  readonly event: string;
  readonly details?: AuditDetails;
}

export function auditEvent(event: EventCode, decision: DecisionRecord, details?: AuditDetails): AuditEvent {
  return details === undefined ? { event, ...decision } : { event, ...decision, details };
}

/** The unchained record of an event: what every audit sink (files, the engine, traces) writes for it. */
export function unchainedRecord(event: AuditEvent, at: { runId: string; seq: number; ts: string }): UnchainedAuditRecord {
  return {
    v: AUDIT_SCHEMA_VERSION,
    run_id: at.runId,
    seq: at.seq,
    ts: at.ts,
    event: event.event,
    layer: event.layer,
    decision: event.decision,
    reason_code: event.reason_code,
    sealed: event.sealed,
    overrideable: event.overrideable,
    final_decider: event.final_decider,
    ...(event.details ? { details: event.details } : {}),
  };
}
