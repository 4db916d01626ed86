import { unchainedRecord, type AuditEvent } from '../domain/audit.js';
import { emptyAuditHead, type Sha256 } from '../domain/audit-chain.js';
import { composeAuditLine } from '../domain/audit-line.js';
import { isSafeRunId } from '../domain/audit-retention.js';
import { cachedScanner, defaultSensitiveScanner, findSensitiveResidue, type SensitiveScanner } from '../domain/audit-sanitizer.js';
import { verifyAuditLog, type AuditVerification } from '../domain/audit-verify.js';
import { StorageError } from '../domain/errors.js';
import type { AuditLog, AuditSink, Clock } from '../domain/ports.js';
import { sha256 as nodeSha256 } from './hashing.js';
import type { Fence, PgEngine } from './pg-engine.js';

/** A run's audit log as the engine holds it, in the shape of the files (`<run>.jsonl`, `<run>.head`). */
export interface PgAuditRun {
  readonly runId: string;
  /** Every record's line in seq order, each followed by a newline; undefined when there is none. */
  readonly log: string | undefined;
  readonly head: string | undefined;
}

/** The log and head of one run, exactly as `maestro audit verify` reads files. */
export async function readPgAuditRun(engine: PgEngine, runId: string, fence?: Fence): Promise<PgAuditRun> {
  const lines = await engine.query<{ line: string }>('SELECT line FROM maestro_audit WHERE run_id = $1 ORDER BY seq', [runId], fence);
  const head = await engine.query<{ head: string }>('SELECT head FROM maestro_audit_heads WHERE run_id = $1', [runId], fence);
  return { runId, log: lines.rows.length === 0 ? undefined : lines.rows.map((r) => `${r.line}\n`).join(''), head: head.rows[0]?.head };
}

/** Every run with an audit log (or head) in the engine, sorted. */
export async function listPgAuditRuns(engine: PgEngine): Promise<string[]> {
  const r = await engine.query<{ run_id: string }>('SELECT run_id FROM maestro_audit_heads UNION SELECT DISTINCT run_id FROM maestro_audit ORDER BY 1');
  return r.rows.map((row) => row.run_id).sort();
}

export async function verifyPgAuditRun(engine: PgEngine, runId: string, scanner: SensitiveScanner = defaultSensitiveScanner): Promise<AuditVerification> {
  return verifyAuditLog({ ...(await readPgAuditRun(engine, runId)), sha256: nodeSha256, scanner });
}

/**
 * The audit log in the engine: the same sanitized, hash-chained records as the JSONL files, one row
 * per record holding its exact line (`maestro_audit`), and the head in `maestro_audit_heads`, written
 * in the same transaction (so a log can never end before its head: a deleted row shows as truncated).
 * `audit verify` rebuilds the file text from the rows and checks it with the same verifier.
 */
export class PgAuditLog implements AuditLog {
  readonly #scanner: SensitiveScanner;

  constructor(
    private readonly engine: PgEngine,
    private readonly clock: Clock,
    private readonly fence?: Fence,
    private readonly sha256: Sha256 = nodeSha256,
    scanner?: SensitiveScanner,
  ) {
    this.#scanner = scanner ?? cachedScanner(defaultSensitiveScanner);
  }

  async open(runId: string): Promise<AuditSink> {
    const where = `engine:audit/${runId}`;
    if (!isSafeRunId(runId) || findSensitiveResidue(runId, this.#scanner).length > 0) {
      throw new StorageError('refusing to open an audit log for this run id: run ids must be plain names free of personal data', 'engine:audit');
    }
    const run = await readPgAuditRun(this.engine, runId, this.fence);
    const lines = run.log === undefined ? [] : run.log.split('\n').filter((l) => l.length > 0);
    if (run.log !== undefined || run.head !== undefined) {
      // The chain is checked before anything is added to it (fail closed), as with the files.
      const verdict = verifyAuditLog({ runId, log: run.log, head: run.head ?? JSON.stringify(emptyAuditHead(runId)), sha256: this.sha256, scanner: { detect: () => [] } });
      if (verdict.status !== 'ok') {
        throw new StorageError(`the audit log of run ${runId} in the engine is damaged (${verdict.status === 'broken' ? `${verdict.kind}: ${verdict.message}` : verdict.status}); nothing was appended (run "maestro audit verify ${runId}")`, where);
      }
    }
    const last = lines.length === 0 ? undefined : (JSON.parse(lines[lines.length - 1]!) as { seq: number; hash: string });
    const events = new Set(lines.map((l) => (JSON.parse(l) as { event: string }).event));
    return new PgAuditSink({ engine: this.engine, runId, where, seq: last ? last.seq + 1 : 0, prevHash: last?.hash ?? emptyAuditHead(runId).hash, clock: this.clock, scanner: this.#scanner, sha256: this.sha256, recorded: events, ...(this.fence ? { fence: this.fence } : {}) });
  }
}

interface SinkOptions {
  readonly engine: PgEngine;
  readonly runId: string;
  readonly where: string;
  readonly seq: number;
  readonly prevHash: string;
  readonly clock: Clock;
  readonly scanner: SensitiveScanner;
  readonly sha256: Sha256;
  readonly recorded: ReadonlySet<string>;
  readonly fence?: Fence;
}

class PgAuditSink implements AuditSink {
  readonly path: string;
  #seq: number;
  #prevHash: string;
  #queue: Promise<void> = Promise.resolve();
  readonly #recorded: Set<string>;

  constructor(private readonly o: SinkOptions) {
    this.path = o.where;
    this.#seq = o.seq;
    this.#prevHash = o.prevHash;
    this.#recorded = new Set(o.recorded);
  }

  hasRecorded(event: string): boolean {
    return this.#recorded.has(event);
  }

  append(event: AuditEvent): Promise<void> {
    const next = this.#queue.then(() => this.#write(event));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #write(event: AuditEvent): Promise<void> {
    const { runId } = this.o;
    const raw = unchainedRecord(event, { runId: runId, seq: this.#seq, ts: this.o.clock.now().toISOString() });
    const { record, line } = composeAuditLine(raw, this.#prevHash, { scanner: this.o.scanner, sha256: this.o.sha256 });
    const head = JSON.stringify({ v: 1, run_id: runId, seq: record.seq, hash: record.hash });
    await this.o.engine.tx(async (db) => {
      await db.query('INSERT INTO maestro_audit (run_id, seq, line) VALUES ($1, $2, $3)', [runId, record.seq, line]);
      await db.query(
        `INSERT INTO maestro_audit_heads (run_id, head) VALUES ($1, $2) ON CONFLICT (run_id) DO UPDATE SET head = EXCLUDED.head, written_at = now()`,
        [runId, head],
      );
    }, this.o.fence);
    this.#recorded.add(record.event);
    this.#seq += 1;
    this.#prevHash = record.hash;
  }
}
