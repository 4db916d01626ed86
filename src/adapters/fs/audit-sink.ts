import type { AuditEvent } from '../../domain/audit.js';

/**
 * The audit log as the files' ledger is built from it (FsRunLedger): a run's log, opened once, that
 * appends records or takes records written ahead by the run's checkpoint journal. The app never sees
 * these: it commits through a RunLedger.
 */

/** Audit records a run store writes ahead with a change: their exact lines, chained after the log's end. */
export interface AuditAhead {
  /** The log they continue (the sink's `path`). */
  readonly log: string;
  readonly lines: readonly string[];
  /** The last of them: the log's head once they are written. */
  readonly last: { readonly seq: number; readonly hash: string };
  /** Bytes of whole lines in the log before them (a failed append is cut back to this). */
  readonly logBytes: number;
}

export interface AuditSink {
  /** Appends one record and flushes it before resolving. */
  append(event: AuditEvent): Promise<void>;
  /**
   * Appends records whose durability another write provides: their exact lines (sanitized, chained)
   * are handed to `persist`, which must make them durable and write them to the log before it
   * resolves (FsRunStore.recordAhead). Nothing else is appended in between.
   */
  appendAhead?(events: readonly AuditEvent[], persist: (ahead: AuditAhead) => Promise<void>): Promise<void>;
  /** Whether the log already holds a record of this event (written before this sink was opened, or by it). */
  hasRecorded?(event: string): boolean;
  /** The step ids the log's MODEL_CALL records name (written before this sink was opened, or by it). */
  recordedSteps?(): ReadonlySet<string>;
  readonly path: string;
}

export interface AuditLog {
  open(runId: string): Promise<AuditSink>;
}
