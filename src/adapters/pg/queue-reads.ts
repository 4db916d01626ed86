import type { PausedRunRow } from '../../domain/pause-notice.js';
import { screenText } from '../../domain/screen.js';
import type { PgEngine } from './engine.js';
import { alive } from './queue.js';

/**
 * A queue row whose run a worker holds now, or a person's continue waiting for the next free worker.
 * A run handed back to the queue (its worker stopped at a checkpoint, or died) is not: nobody holds
 * it, so it is `interrupted` (queued again: the next free worker resumes it).
 */
const PENDING = `(q.state = 'queued' AND q.kind = 'decision' AND NOT q.recovered) OR (q.state = 'running' AND ${alive('q.owner')})`;

/** A run the queue hands to the next free worker: queued again (handed back), or left running by a worker that is gone. */
const REQUEUED = `q.state IN ('queued', 'running') AND NOT (${PENDING})`;

/** A run's row in the engine's queue, as `status` shows an intake's claim of it. */
export interface QueuedRun {
  /** queued, running, paused, done, rejected. */
  readonly queue: string;
  /** The live worker that runs it now (its name), else null. */
  readonly worker: string | null;
}

export interface QueueStats {
  readonly queued: number;
  readonly running: number;
  readonly paused: number;
  readonly done: number;
  readonly rejected: number;
}

export interface LiveWorker {
  readonly session_id: string;
  readonly name: string;
  readonly host: string;
  readonly pid: number;
  readonly started_at: string;
  readonly current_run: string | null;
}

/** The queue as `maestro status`, `runs` and the console read it: counts, live workers, runs held, paused and pending. */
export class PgQueueReads {
  constructor(private readonly engine: PgEngine) {}

  async stats(): Promise<QueueStats> {
    const r = await this.engine.query<{ state: keyof QueueStats; n: string }>(
      'SELECT state, count(*) AS n FROM maestro_queue GROUP BY state',
    );
    const out: Record<keyof QueueStats, number> = { queued: 0, running: 0, paused: 0, done: 0, rejected: 0 };
    for (const row of r.rows) out[row.state] = Number(row.n);
    return out;
  }

  /** Worker sessions whose database connection is alive, oldest first. */
  async liveWorkers(): Promise<LiveWorker[]> {
    const r = await this.engine.query<LiveWorker & { started_at: Date }>(
      `SELECT w.session_id, w.name, w.host, w.pid, w.started_at, w.current_run FROM maestro_workers w
        WHERE w.stopped_at IS NULL AND ${alive('w.session_id')} ORDER BY w.started_at`,
    );
    return r.rows.map((w) => ({ ...w, started_at: new Date(w.started_at).toISOString() }));
  }

  /**
   * Every run paused for a person, cluster-wide, oldest pause first, with who paused it: the worker
   * whose claim it was (its name and host), or nobody when it was paused in the foreground (`maestro run`).
   */
  async pausedRuns(): Promise<(PausedRunRow & { paused_by: { name: string; host: string } | null })[]> {
    const r = await this.engine.query<{
      run_id: string;
      source: string;
      layer: string | null;
      reason_code: string | null;
      message: string | null;
      requested_at: string | null;
      worker_name: string | null;
      worker_host: string | null;
    }>(
      `SELECT r.run_id, r.state->>'source' AS source, r.state->'pause'->>'layer' AS layer, r.state->'pause'->>'reason_code' AS reason_code,
              coalesce(r.state->'pause'->>'message', r.state->>'summary', '') AS message, r.state->'pause'->>'requested_at' AS requested_at,
              w.name AS worker_name, w.host AS worker_host
         FROM maestro_runs r
         LEFT JOIN maestro_queue q ON q.run_id = r.run_id AND q.state = 'paused'
         LEFT JOIN maestro_workers w ON w.session_id = q.owner
        WHERE r.status = 'paused' ORDER BY r.state->'pause'->>'requested_at', r.run_id`,
    );
    // Checkpoints written before they were screened are read here without parsing: screened as they are shown.
    return r.rows.map(({ worker_name, worker_host, ...row }) => ({
      ...row,
      source: screenText(row.source),
      message: screenText(row.message ?? ''),
      paused_by: worker_name ? { name: screenText(worker_name), host: screenText(worker_host ?? '') } : null,
    }));
  }

  /** Runs a worker holds now, with the worker's session. */
  async runningRuns(): Promise<
    { run_id: string; source: string; owner: string | null; owner_alive: boolean; claimed_at: string | null }[]
  > {
    const r = await this.engine.query<{
      run_id: string;
      source: string;
      owner: string | null;
      owner_alive: boolean;
      claimed_at: Date | null;
    }>(
      `SELECT q.run_id, q.source, q.owner, ${alive('q.owner')} AS owner_alive, q.claimed_at FROM maestro_queue q WHERE q.state = 'running' ORDER BY q.seq`,
    );
    return r.rows.map((row) => ({ ...row, claimed_at: row.claimed_at ? new Date(row.claimed_at).toISOString() : null }));
  }

  /** Runs a worker holds now or a continue waits for one: the engine's counterpart of a live holder on files. */
  async pendingRuns(): Promise<Set<string>> {
    const r = await this.engine.query<{ run_id: string }>(`SELECT q.run_id FROM maestro_queue q WHERE ${PENDING}`);
    return new Set(r.rows.map((row) => row.run_id));
  }

  /** Runs the queue hands to the next free worker though nobody holds them (REQUEUED): shown interrupted, queued again. */
  async requeuedRuns(): Promise<Set<string>> {
    const r = await this.engine.query<{ run_id: string }>(`SELECT q.run_id FROM maestro_queue q WHERE ${REQUEUED}`);
    return new Set(r.rows.map((row) => row.run_id));
  }

  /** `requeuedRuns`, for one run. */
  async isRunRequeued(runId: string): Promise<boolean> {
    const r = await this.engine.query(`SELECT 1 FROM maestro_queue q WHERE q.run_id = $1 AND (${REQUEUED})`, [runId]);
    return r.rowCount === 1;
  }

  /** Whether a worker holds this run now or a continue waits for one (`pendingRuns`, for one run): what every view shows as running. */
  async isRunPending(runId: string): Promise<boolean> {
    const r = await this.engine.query(`SELECT 1 FROM maestro_queue q WHERE q.run_id = $1 AND (${PENDING})`, [runId]);
    return r.rowCount === 1;
  }

  /** The queue rows of these runs (a run the engine has not been given has none). */
  async queueRows(runIds: readonly string[]): Promise<Map<string, QueuedRun>> {
    const r = await this.engine.query<{ run_id: string; state: string; worker: string | null }>(
      `SELECT q.run_id, q.state, CASE WHEN q.state = 'running' AND ${alive('q.owner')} THEN w.name END AS worker
         FROM maestro_queue q LEFT JOIN maestro_workers w ON w.session_id = q.owner WHERE q.run_id = ANY($1::text[])`,
      [runIds],
    );
    return new Map(r.rows.map((row) => [row.run_id, { queue: row.state, worker: row.worker }]));
  }

  /** Every audit log with no checkpoint (a command that was invalid, a run that died before its first), as text. */
  async auditOnlyRuns(): Promise<Map<string, string>> {
    const r = await this.engine.query<{ run_id: string; text: string }>(
      `SELECT a.run_id, string_agg(a.line, E'\n' ORDER BY a.seq) AS text FROM maestro_audit a
        WHERE NOT EXISTS (SELECT 1 FROM maestro_runs r WHERE r.run_id = a.run_id) GROUP BY a.run_id`,
    );
    return new Map(r.rows.map((row) => [row.run_id, row.text]));
  }

  /** Whether a live worker holds this run now. */
  async isRunOwned(runId: string): Promise<boolean> {
    const r = await this.engine.query(`SELECT 1 FROM maestro_queue q WHERE q.run_id = $1 AND q.state = 'running' AND ${alive('q.owner')}`, [
      runId,
    ]);
    return r.rowCount === 1;
  }
}
