import { z } from 'zod';
import { AUDIT_HEADER_FIELDS, Sha256Hex, type AuditRecord, type UnchainedAuditRecord } from './audit.js';

/** Hex SHA-256 of a UTF-8 string; injected so the domain stays free of `node:crypto`. */
export type Sha256 = (text: string) => string;

/** `prev_hash` of the first record of every run file. */
export const GENESIS_HASH = '0'.repeat(64);

/** Top-level field order of a written record; nested objects are written with sorted keys. */
const FIELD_ORDER = [...AUDIT_HEADER_FIELDS, 'details', 'prev_hash', 'hash'] as const;

/**
 * JSON with object keys sorted (by UTF-16 code unit), no whitespace, `undefined` members left out.
 * For plain JSON data (what the sanitizer produces) it is a pure function of the value.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The canonical serialization of a record, which is both what is hashed and, byte for byte, the
 * line that is written: top-level fields in schema order (readable), nested keys sorted.
 * `verify` re-serializes every parsed line and compares, so any byte edit shows up.
 */
export function serializeAuditRecord(record: Partial<AuditRecord>): string {
  const fields = record as Record<string, unknown>;
  const members = FIELD_ORDER.filter((k) => fields[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonicalJson(fields[k])}`);
  return `{${members.join(',')}}`;
}

/** SHA-256 over the canonical JSON of the record without its `hash` (so `prev_hash` is covered). */
export function hashAuditRecord(record: Omit<AuditRecord, 'hash'> & { hash?: string }, sha256: Sha256): string {
  const { hash: _ignored, ...rest } = record;
  return sha256(serializeAuditRecord(rest));
}

/** Links a record into its run's chain. */
export function chainAuditRecord(record: UnchainedAuditRecord, prevHash: string, sha256: Sha256): AuditRecord {
  const linked = { ...record, prev_hash: prevHash };
  return { ...linked, hash: hashAuditRecord(linked, sha256) };
}

/**
 * `.maestro/audit/<run_id>.head`: the last record the writer acknowledged, rewritten atomically after
 * every append (seq -1 and GENESIS_HASH before the first). A chain alone cannot show that its last
 * lines were cut off; the head can: a log that ends before the head's `seq` was truncated.
 */
export const AuditHead = z.strictObject({
  v: z.literal(1),
  run_id: z.string().min(1),
  seq: z.number().int().min(-1),
  hash: Sha256Hex,
});
export type AuditHead = z.infer<typeof AuditHead>;

export function emptyAuditHead(runId: string): AuditHead {
  return { v: 1, run_id: runId, seq: -1, hash: GENESIS_HASH };
}
