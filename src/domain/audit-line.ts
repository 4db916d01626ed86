import { AuditRecord, UnchainedAuditRecord } from './audit.js';
import { chainAuditRecord, serializeAuditRecord } from './audit-chain.js';
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
  const input = UnchainedAuditRecord.parse(raw);
  try {
    const record = AuditRecord.parse(chainAuditRecord(sanitizeAuditRecord(input, deps), prevHash, deps.sha256));
    const line = serializeAuditRecord(record);
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
