import { unchainedRecord, type AuditEvent } from '../../domain/audit.js';
import { emptyAuditHead, type Sha256 } from '../../domain/audit-chain.js';
import { composeAuditLine } from '../../domain/audit-line.js';
import { isSafeRunId } from '../../domain/audit-retention.js';
import { findSensitiveResidue, type SensitiveScanner } from '../../domain/audit-sanitizer.js';
import { verifyAuditLog } from '../../domain/audit-verify.js';
import { StorageError } from '../../domain/errors.js';
import type { Clock } from '../../domain/ports.js';
import type { Fence, PgEngine, Queryable } from './engine.js';

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
  const r = await engine.query<{ run_id: string }>(
    'SELECT run_id FROM maestro_audit_heads UNION SELECT DISTINCT run_id FROM maestro_audit ORDER BY 1',
  );
  return r.rows.map((row) => row.run_id).sort();
}

/** Where a run's chain goes on in the engine, and what its log already holds. */
export interface PgChain {
  readonly seq: number;
  readonly prevHash: string;
  /** The events the log holds. */
  readonly events: ReadonlySet<string>;
  /** Step ids of its MODEL_CALL records. */
  readonly steps: ReadonlySet<string>;
}

/**
 * The audit log in the engine: the same sanitized, hash-chained records as the JSONL files, one row
 * per record holding its exact line (`maestro_audit`), and the head in `maestro_audit_heads`, written
 * in the same transaction (so a log can never end before its head: a deleted row shows as truncated).
 * `audit verify` rebuilds the file text from the rows and checks it with the same verifier. This reads
 * a run's chain before anything is added to it: a chain that does not verify is refused (fail closed).
 */
export async function readPgChain(
  engine: PgEngine,
  runId: string,
  options: { sha256: Sha256; scanner: SensitiveScanner; fence?: Fence },
): Promise<PgChain> {
  const where = `engine:audit/${runId}`;
  if (!isSafeRunId(runId) || findSensitiveResidue(runId, options.scanner).length > 0) {
    throw new StorageError(
      'refusing to open an audit log for this run id: run ids must be plain names free of personal data',
      'engine:audit',
    );
  }
  const run = await readPgAuditRun(engine, runId, options.fence);
  const lines = run.log === undefined ? [] : run.log.split('\n').filter((l) => l.length > 0);
  if (run.log !== undefined || run.head !== undefined) {
    const head = run.head ?? JSON.stringify(emptyAuditHead(runId));
    const verdict = verifyAuditLog({ runId, log: run.log, head, sha256: options.sha256, scanner: { detect: () => [] } });
    if (verdict.status !== 'ok') {
      const why = verdict.status === 'broken' ? `${verdict.kind}: ${verdict.message}` : verdict.status;
      throw new StorageError(
        `the audit log of run ${runId} in the engine is damaged (${why}); nothing was appended (run "maestro audit verify ${runId}")`,
        where,
      );
    }
  }
  const records = lines.map((l) => JSON.parse(l) as { seq: number; hash: string; event: string; details?: { step_id?: unknown } });
  const last = records.at(-1);
  const steps = records.flatMap((r) => (r.event === 'MODEL_CALL' && typeof r.details?.step_id === 'string' ? [r.details.step_id] : []));
  return {
    seq: last ? last.seq + 1 : 0,
    prevHash: last?.hash ?? emptyAuditHead(runId).hash,
    events: new Set(records.map((r) => r.event)),
    steps: new Set(steps),
  };
}

/** Composes records after a chain's end (sanitized, chained), without moving it: their lines and the head after them. */
export function composePgRecords(
  chain: Pick<PgChain, 'seq' | 'prevHash'>,
  events: readonly AuditEvent[],
  options: { runId: string; clock: Clock; sha256: Sha256; scanner: SensitiveScanner },
): { rows: { seq: number; line: string; event: string; step?: string }[]; seq: number; prevHash: string; head: string } {
  let { seq, prevHash } = chain;
  const rows: { seq: number; line: string; event: string; step?: string }[] = [];
  for (const event of events) {
    const raw = unchainedRecord(event, { runId: options.runId, seq, ts: options.clock.now().toISOString() });
    const { record, line } = composeAuditLine(raw, prevHash, { scanner: options.scanner, sha256: options.sha256 });
    const step = record.event === 'MODEL_CALL' && typeof record.details?.step_id === 'string' ? record.details.step_id : undefined;
    rows.push({ seq: record.seq, line, event: record.event, ...(step ? { step } : {}) });
    seq += 1;
    prevHash = record.hash;
  }
  return { rows, seq, prevHash, head: JSON.stringify({ v: 1, run_id: options.runId, seq: seq - 1, hash: prevHash }) };
}

/** Inserts composed records and moves the head, inside the caller's transaction. */
export async function insertPgRecords(db: Queryable, runId: string, composed: ReturnType<typeof composePgRecords>): Promise<void> {
  if (composed.rows.length === 0) return;
  for (const row of composed.rows) {
    await db.query('INSERT INTO maestro_audit (run_id, seq, line) VALUES ($1, $2, $3)', [runId, row.seq, row.line]);
  }
  await db.query(
    `INSERT INTO maestro_audit_heads (run_id, head) VALUES ($1, $2) ON CONFLICT (run_id) DO UPDATE SET head = EXCLUDED.head, written_at = now()`,
    [runId, composed.head],
  );
}
