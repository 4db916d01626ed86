import type { Acceptance } from '../../domain/floor/floor.js';
import type { Rejection } from '../../domain/queue.js';
import type { Delivery } from '../../domain/ports.js';
import type { PgEngine } from './engine.js';
import { QUEUE_CHANNEL } from './queue.js';

export interface Submission {
  readonly runId: string;
  readonly workspaceId: string;
  readonly source: string;
  readonly body: string;
  readonly inputHashes: Readonly<Record<string, string>>;
  /** The floor's acceptances of the workspace the command was dropped into: the worker applies these, never its own. */
  readonly floorAccept: readonly Acceptance[];
}

/** The queue as the intake and `hitl` write and read it (no claim is held); `status`, `runs` and the console read it through PgQueueReads. */
export class PgQueue {
  constructor(private readonly engine: PgEngine) {}

  /** Adds a command (idempotent by run id: an intake that restarts submits its claims again); true if new. */
  async submit(s: Submission): Promise<boolean> {
    return this.engine.tx(async (db) => {
      const r = await db.query(
        `INSERT INTO maestro_queue (run_id, workspace_id, source, body, input_hashes, floor_accept) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (run_id) DO NOTHING`,
        [s.runId, s.workspaceId, s.source, s.body, JSON.stringify(s.inputHashes), JSON.stringify(s.floorAccept)],
      );
      await db.query('SELECT pg_notify($1, $2)', [QUEUE_CHANNEL, s.runId]);
      return r.rowCount === 1;
    });
  }

  /** Which of these run ids the engine has as a queued or past command. */
  async known(runIds: readonly string[]): Promise<Set<string>> {
    if (runIds.length === 0) return new Set();
    const r = await this.engine.query<{ run_id: string }>('SELECT run_id FROM maestro_queue WHERE run_id = ANY($1::text[])', [runIds]);
    return new Set(r.rows.map((row) => row.run_id));
  }

  async undelivered(workspaceId: string): Promise<Delivery[]> {
    const r = await this.engine.query<{
      run_id: string;
      source: string;
      state: Delivery['state'];
      kind: Delivery['kind'];
      rejection: Rejection | null;
      status: string | null;
      summary: string | null;
      decision: string | null;
      reason_code: string | null;
    }>(
      `SELECT q.run_id, q.source, q.state, q.kind, q.rejection, r.status, r.state->>'summary' AS summary,
              r.state->'decision'->>'decision' AS decision, r.state->'decision'->>'reason_code' AS reason_code
         FROM maestro_queue q LEFT JOIN maestro_runs r ON r.run_id = q.run_id
        WHERE q.workspace_id = $1 AND q.delivered_at IS NULL AND q.state IN ('paused', 'done', 'rejected')
        ORDER BY q.seq`,
      [workspaceId],
    );
    return r.rows.map((row) => ({
      runId: row.run_id,
      source: row.source,
      state: row.state,
      kind: row.kind,
      rejection: row.rejection,
      status: row.status,
      summary: row.summary,
      decision: row.decision,
      reasonCode: row.reason_code,
    }));
  }

  /** Marks a row written back, unless it moved on meanwhile (then it is delivered again). */
  async markDelivered(runId: string, state: string): Promise<void> {
    await this.engine.query('UPDATE maestro_queue SET delivered_at = now() WHERE run_id = $1 AND state = $2 AND delivered_at IS NULL', [
      runId,
      state,
    ]);
  }

  async artifacts(runId: string): Promise<{ path: string; content: string; protect: string[] }[]> {
    const r = await this.engine.query<{ path: string; content: string; protect: string[] }>(
      'SELECT path, content, protect FROM maestro_artifacts WHERE run_id = $1 ORDER BY path',
      [runId],
    );
    return r.rows;
  }

  /** Runs this workspace submitted that have not ended or paused yet (queued or running). */
  async outstanding(workspaceId: string): Promise<number> {
    const r = await this.engine.query<{ n: string }>(
      `SELECT count(*) AS n FROM maestro_queue WHERE workspace_id = $1 AND (state IN ('queued', 'running') OR delivered_at IS NULL)`,
      [workspaceId],
    );
    return Number(r.rows[0]?.n ?? 0);
  }

  /** Queues a paused run a person chose to continue; any free worker resumes it from its checkpoint. */
  async postDecision(runId: string, fallback: Omit<Submission, 'runId' | 'inputHashes'>): Promise<void> {
    await this.engine.tx(async (db) => {
      const r = await db.query(
        `UPDATE maestro_queue SET state = 'queued', kind = 'decision', recovered = false, owner = NULL, delivered_at = NULL, finished_at = NULL WHERE run_id = $1 AND state <> 'running'`,
        [runId],
      );
      if (r.rowCount === 0) {
        // A run started in the foreground (`maestro run`) has no queue row yet.
        await db.query(
          `INSERT INTO maestro_queue (run_id, workspace_id, source, body, kind, floor_accept) VALUES ($1, $2, $3, $4, 'decision', $5) ON CONFLICT (run_id) DO NOTHING`,
          [runId, fallback.workspaceId, fallback.source, fallback.body, JSON.stringify(fallback.floorAccept)],
        );
      }
      await db.query('SELECT pg_notify($1, $2)', [QUEUE_CHANNEL, runId]);
    });
  }

  /** Runs with a queued decision, oldest first. */
  async pendingDecisions(): Promise<string[]> {
    const r = await this.engine.query<{ run_id: string }>(
      `SELECT run_id FROM maestro_queue WHERE state = 'queued' AND kind = 'decision' ORDER BY seq`,
    );
    return r.rows.map((row) => row.run_id);
  }
}
