import type { AuditEvent, AuditRecord } from '../../domain/audit.js';
import { unchainedRecord } from '../../domain/audit.js';
import { GENESIS_HASH, type Sha256 } from '../../domain/audit-chain.js';
import { composeAuditLine } from '../../domain/audit-line.js';
import type { SensitiveScanner } from '../../domain/audit-sanitizer.js';
import type { Clock } from '../../domain/ports.js';
import type { AuditLog, AuditSink } from '../fs/audit-sink.js';

/** A record as the audit log keeps it (sanitized), without its place in the chain. */
export type TracedRecord = Omit<AuditRecord, 'v' | 'seq' | 'prev_hash' | 'hash'>;

/** What the records are forwarded to (the span builder). */
export interface AuditRecordObserver {
  onRecord(record: TracedRecord): void;
}

export interface TracingAuditLogOptions {
  readonly inner: AuditLog;
  readonly observer: AuditRecordObserver;
  readonly clock: Clock;
  /** The same detector the audit log uses, so a trace never holds what the log would not. */
  readonly scanner: SensitiveScanner;
  readonly sha256: Sha256;
  /** A record the observer could not take: reported, never thrown into the run. */
  readonly onError: (error: unknown) => void;
}

/**
 * The audit log, also feeding every record it wrote to an observer (the tracer). A record is
 * forwarded only once the log has it, and only as the log keeps it: sanitized by the same
 * `composeAuditLine`, so a record that could not be made safe goes on as the payload-free
 * `AUDIT_REDACTION_FAILED` record. Tracing never fails a run: the observer's errors go to `onError`.
 */
export class TracingAuditLog implements AuditLog {
  constructor(private readonly options: TracingAuditLogOptions) {}

  async open(runId: string): Promise<AuditSink> {
    const inner = await this.options.inner.open(runId);
    return new TracingAuditSink(inner, runId, this.options);
  }
}

class TracingAuditSink implements AuditSink {
  /** Present when the inner sink has it: records written ahead are traced once they are written. */
  readonly appendAhead?: AuditSink['appendAhead'];

  constructor(
    private readonly inner: AuditSink,
    private readonly runId: string,
    private readonly options: TracingAuditLogOptions,
  ) {
    const ahead = inner.appendAhead?.bind(inner);
    if (ahead) {
      this.appendAhead = (events, persist) => {
        const ts = this.options.clock.now().toISOString();
        return ahead(events, persist).then(() => {
          for (const event of events) this.#forward(event, ts);
        });
      };
    }
  }

  get path(): string {
    return this.inner.path;
  }

  hasRecorded(event: string): boolean {
    return this.inner.hasRecorded?.(event) ?? false;
  }

  recordedSteps(): ReadonlySet<string> {
    return this.inner.recordedSteps?.() ?? new Set();
  }

  append(event: AuditEvent): Promise<void> {
    // The time is read before the write, as the log's own sink reads it when the write starts.
    const ts = this.options.clock.now().toISOString();
    return this.inner.append(event).then(() => this.#forward(event, ts));
  }

  #forward(event: AuditEvent, ts: string): void {
    const { observer, scanner, sha256, onError } = this.options;
    try {
      const raw = unchainedRecord(event, { runId: this.runId, seq: 0, ts: ts });
      const { record } = composeAuditLine(raw, GENESIS_HASH, { scanner, sha256 });
      const { v: _v, seq: _seq, prev_hash: _prev, hash: _hash, ...traced } = record;
      observer.onRecord(traced);
    } catch (error) {
      onError(error);
    }
  }
}
