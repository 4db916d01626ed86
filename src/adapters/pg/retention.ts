import { selectExpiredLogs, type AuditLogEntry } from '../../domain/audit-retention.js';
import type { PgEngine } from './engine.js';

/** What a prune of the engine did (or would do): the same shape as the files' prune report. */
export interface PgPruneReport {
  readonly cutoff: Date;
  readonly dryRun: boolean;
  readonly deleted: readonly AuditLogEntry[];
  readonly kept: number;
  readonly checkpoints: readonly string[];
}

/** A run the queue or its checkpoint says may still go on: its log is kept, whatever its age. */
const LIVE_RUNS = `SELECT run_id FROM maestro_runs WHERE status IN ('paused', 'running')
                   UNION SELECT run_id FROM maestro_queue WHERE state IN ('queued', 'running', 'paused')`;
/** Runs whose intake has not written them back yet: it still reads their checkpoint and artifacts. */
const UNDELIVERED = `SELECT run_id FROM maestro_queue WHERE delivered_at IS NULL`;

/**
 * Audit retention in the engine, as `pruneAuditLogs` does on files: the logs (rows and head) of runs
 * last written before `now - retentionDays`, except runs that may still go on (paused, running,
 * queued); and the checkpoints (state and side files, and the artifacts kept for delivery) of runs
 * that ended before then and were written back to their workspace. The queue rows stay: they are what makes a command
 * submitted again after a crash a no-op. Each run is deleted in its own transaction.
 */
export async function prunePgAudit(
  engine: PgEngine,
  options: { retentionDays: number; now: Date; dryRun?: boolean },
): Promise<PgPruneReport> {
  const logs = await engine.query<{ run_id: string; last: Date; live: boolean }>(
    `SELECT a.run_id, max(a.written_at) AS last, a.run_id IN (${LIVE_RUNS}) AS live FROM maestro_audit a GROUP BY a.run_id`,
  );
  const entries = logs.rows.map((r) => ({ runId: r.run_id, files: [`engine:audit/${r.run_id}`], lastWrite: new Date(r.last) }));
  const live = new Set(logs.rows.filter((r) => r.live).map((r) => r.run_id));
  const { cutoff, expired: aged } = selectExpiredLogs(entries, options.retentionDays, options.now);
  const expired = aged.filter((e) => !live.has(e.runId));
  const ended = await engine.query<{ run_id: string }>(
    `SELECT run_id FROM maestro_runs
      WHERE status NOT IN ('paused', 'running') AND run_id NOT IN (${LIVE_RUNS}) AND run_id NOT IN (${UNDELIVERED})
        AND coalesce(state->>'finished_at', state->>'updated_at')::timestamptz < $1
      ORDER BY coalesce(state->>'finished_at', state->>'updated_at'), run_id`,
    [cutoff.toISOString()],
  );
  const checkpoints = ended.rows.map((r) => r.run_id);
  if (options.dryRun !== true) {
    for (const entry of expired)
      await engine.tx(async (db) => {
        await db.query('DELETE FROM maestro_audit WHERE run_id = $1', [entry.runId]);
        await db.query('DELETE FROM maestro_audit_heads WHERE run_id = $1', [entry.runId]);
      });
    for (const runId of checkpoints)
      await engine.tx(async (db) => {
        for (const table of ['maestro_run_files', 'maestro_artifacts', 'maestro_runs'])
          await db.query(`DELETE FROM ${table} WHERE run_id = $1`, [runId]);
      });
  }
  return { cutoff, dryRun: options.dryRun === true, deleted: expired, kept: entries.length - expired.length, checkpoints };
}
