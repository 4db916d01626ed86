import { z } from 'zod';
import { Decision, FinalDecider, Layer, type DecisionRecord } from './decision.js';

export const AUDIT_SCHEMA_VERSION = 1;

/** Details are category-level signals only: digests, sizes, counts, ids, codes. Never raw text. */
export const AuditDetails = z.record(z.string(), z.unknown());
export type AuditDetails = z.infer<typeof AuditDetails>;

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
});
export type AuditRecord = z.infer<typeof AuditRecord>;

/** What the app hands the audit sink; the sink adds run id, sequence number and time. */
export interface AuditEvent extends DecisionRecord {
  readonly event: string;
  readonly details?: AuditDetails;
}

export function auditEvent(event: string, decision: DecisionRecord, details?: AuditDetails): AuditEvent {
  return details === undefined ? { event, ...decision } : { event, ...decision, details };
}
