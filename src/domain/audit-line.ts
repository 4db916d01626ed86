import { AuditRecord, type UnchainedAuditRecord } from './audit.js';
import { chainAuditRecord, serializeAuditRecord, type Sha256 } from './audit-chain.js';
import {
  AuditRedactionError,
  findSensitiveResidue,
  redactionFailedRecord,
  sanitizeAuditRecord,
  type SanitizerDeps,
} from './audit-sanitizer.js';

/** What the writer appends: the record, its exact line (without the newline), and whether it is the fallback. */
export interface ComposedAuditLine {
  readonly record: AuditRecord;
  readonly line: string;
  /** True when the record could not be made safe and the payload-free AUDIT_REDACTION_FAILED record replaced it. */
  readonly redactionFailed: boolean;
}

/**
 * Sanitizes, checks and chains one record (fail closed). If sanitizing throws, or the sanitized
 * record still trips the detector or holds an e-mail-like token, or it no longer fits the schema,
 * the record is replaced by `redactionFailedRecord` (same decision, no payload).
 *
 * Throws (a bug in the caller, not a redaction problem) only when `raw` itself is not a record.
 */
export function composeAuditLine(raw: UnchainedAuditRecord, prevHash: string, deps: SanitizerDeps): ComposedAuditLine {
  const input = checkShape(raw);
  try {
    const { record, line } = chainOnce(sanitizeAuditRecord(input, deps), prevHash, deps.sha256);
    const residue = findSensitiveResidue(line, deps.scanner);
    if (residue.length > 0) throw new AuditRedactionError(`still holds ${residue.join(', ')} after redaction`);
    return { record, line, redactionFailed: false };
  } catch {
    // Whatever went wrong, nothing of the payload may reach the disk; the cause is not kept either,
    // since its message could quote the content.
    const record = AuditRecord.parse(chainAuditRecord(redactionFailedRecord(input), prevHash, deps.sha256));
    return { record, line: serializeAuditRecord(record), redactionFailed: true };
  }
}

/**
 * Chains a record and writes its line with one serialization: the line is what is hashed (every
 * field but `hash`) with `hash`, the last field of a written record, appended. The record is checked
 * against the schema, and the line is the record's canonical serialization (`verify` re-serializes
 * every line and compares).
 */
function chainOnce(record: UnchainedAuditRecord, prevHash: string, sha256: Sha256): { record: AuditRecord; line: string } {
  const linked = { ...record, prev_hash: prevHash };
  const hashed = serializeAuditRecord(linked);
  const hash = sha256(hashed);
  const chained = AuditRecord.parse({ ...linked, hash });
  return { record: chained, line: `${hashed.slice(0, -1)},"hash":${JSON.stringify(hash)}}` };
}

const CODE = /^[A-Z][A-Z0-9_]*$/;

/**
 * A cheap check that the caller handed over a record at all (the schema check after chaining is the
 * full one): codes in their form, details a plain object. What fails here is a bug, not content.
 */
function checkShape(raw: UnchainedAuditRecord): UnchainedAuditRecord {
  const details: unknown = raw.details;
  const plain =
    details === undefined ||
    (details !== null && typeof details === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(details)));
  if (
    typeof raw.event !== 'string' ||
    !CODE.test(raw.event) ||
    typeof raw.reason_code !== 'string' ||
    !CODE.test(raw.reason_code) ||
    !plain
  ) {
    throw new TypeError('not an audit record: event and reason_code must be codes, and details a plain object');
  }
  return raw;
}
