import { open, readFile } from 'node:fs/promises';
import { AuditRecord, AUDIT_SCHEMA_VERSION, type AuditEvent } from '../domain/audit.js';
import type { AuditLog, AuditSink, Clock } from '../domain/ports.js';
import { StorageError } from '../domain/errors.js';
import { ensurePrivateDir } from './atomic-file.js';
import type { WorkspacePaths } from './workspace-paths.js';

/** Turns a record into what may be persisted; throws if it cannot be made safe. */
export type Sanitize = (record: AuditRecord) => AuditRecord;

/**
 * `.maestro/audit/<run_id>.jsonl`: append-only, one record per line, each flushed to disk before
 * `append` resolves. Folder 0700, files 0600. Records are schema-checked on write.
 */
export class JsonlAuditLog implements AuditLog {
  constructor(
    private readonly paths: WorkspacePaths,
    private readonly clock: Clock,
    private readonly sanitize: Sanitize = (r) => r,
  ) {}

  async open(runId: string): Promise<AuditSink> {
    await ensurePrivateDir(this.paths.audit);
    const file = this.paths.auditLog(runId);
    const seq = await countRecords(file);
    return new JsonlAuditSink(file, runId, seq, this.clock, this.sanitize);
  }
}

class JsonlAuditSink implements AuditSink {
  #seq: number;
  #queue: Promise<void> = Promise.resolve();

  constructor(
    readonly path: string,
    private readonly runId: string,
    seq: number,
    private readonly clock: Clock,
    private readonly sanitize: Sanitize,
  ) {
    this.#seq = seq;
  }

  append(event: AuditEvent): Promise<void> {
    // Appends are serialised so sequence numbers match line order even when callers do not await.
    const next = this.#queue.then(() => this.#write(event));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #write(event: AuditEvent): Promise<void> {
    const record = AuditRecord.parse({
      v: AUDIT_SCHEMA_VERSION,
      run_id: this.runId,
      seq: this.#seq,
      ts: this.clock.now().toISOString(),
      event: event.event,
      layer: event.layer,
      decision: event.decision,
      reason_code: event.reason_code,
      sealed: event.sealed,
      overrideable: event.overrideable,
      final_decider: event.final_decider,
      ...(event.details ? { details: event.details } : {}),
    });
    const line = `${JSON.stringify(this.sanitize(record))}\n`;
    let handle;
    try {
      handle = await open(this.path, 'a', 0o600);
      await handle.write(line);
      await handle.datasync();
    } catch (error) {
      throw new StorageError(`could not append to the audit log ${this.path}: ${(error as Error).message}`, this.path, { cause: error });
    } finally {
      await handle?.close();
    }
    this.#seq += 1;
  }
}

async function countRecords(file: string): Promise<number> {
  try {
    const text = await readFile(file, 'utf8');
    return text.split('\n').filter((l) => l.trim().length > 0).length;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
}
