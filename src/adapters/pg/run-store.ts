import { parseRunState } from '../../domain/checkpoint.js';
import { QUEUE_STATE_OF } from '../../domain/queue.js';
import type { RunState } from '../../domain/run-state.js';
import { RAW_COMMAND_FILE, screenRunState } from '../../domain/screen.js';
import { isLiveRun } from '../../domain/run/transitions.js';
import { CheckpointUnreadableError, schemaProblem } from '../../domain/errors.js';
import type { Fence, PgEngine, Queryable } from './engine.js';
import { DONE_CHANNEL } from './queue.js';

/**
 * Saves a checkpoint inside the caller's transaction (the ledger's commit): the RunState as jsonb in
 * `maestro_runs`, screened as every kept state is (see screen.ts). A checkpoint that ends or pauses
 * the run moves its queue row in the same transaction, so a run's end and its queue state never
 * disagree after a crash; one that ends it drops the command as given (side file and queue copy).
 */
export async function writeRunState(db: Queryable, state: RunState): Promise<void> {
  const kept = screenRunState(state);
  await db.query(
    `INSERT INTO maestro_runs (run_id, status, state, updated_at) VALUES ($1, $2, $3, now())
     ON CONFLICT (run_id) DO UPDATE SET status = EXCLUDED.status, state = EXCLUDED.state, updated_at = now()`,
    [state.run_id, state.status, JSON.stringify(kept)],
  );
  if (!isLiveRun(state)) {
    // The run has ended: the command as given goes, from its side files and from its queue row.
    await db.query('DELETE FROM maestro_run_files WHERE run_id = $1 AND name = $2', [state.run_id, RAW_COMMAND_FILE]);
    await db.query('UPDATE maestro_queue SET body = $2 WHERE run_id = $1', [state.run_id, JSON.stringify(kept.command)]);
  }
  const next = QUEUE_STATE_OF[state.status];
  if (next) {
    const moved = await db.query(
      `UPDATE maestro_queue SET state = $2, finished_at = now(), delivered_at = NULL WHERE run_id = $1 AND state IN ('running', 'paused') AND state <> $2`,
      [state.run_id, next],
    );
    // Delivered on commit: the intake writes the artifact (or the pause, or the rejection) back.
    if (moved.rowCount === 1) await db.query('SELECT pg_notify($1, $2)', [DONE_CHANNEL, state.run_id]);
  }
}

/** Writes a run's side files (`command.json`, `hitl.json`, `draft.md`) and removes others, inside the caller's transaction. */
export async function writeRunFiles(
  db: Queryable,
  runId: string,
  files: readonly { name: string; content: string }[],
  remove: readonly string[],
): Promise<void> {
  for (const file of files) {
    await db.query(
      `INSERT INTO maestro_run_files (run_id, name, content) VALUES ($1, $2, $3)
       ON CONFLICT (run_id, name) DO UPDATE SET content = EXCLUDED.content, written_at = now()`,
      [runId, file.name, file.content],
    );
  }
  for (const name of remove) await db.query('DELETE FROM maestro_run_files WHERE run_id = $1 AND name = $2', [runId, name]);
}

/** Reads checkpoints in `maestro_runs` and side files in `maestro_run_files` (the ledger writes them). */
export class PgRunStore {
  constructor(
    private readonly engine: PgEngine,
    private readonly fence?: Fence,
  ) {}

  async load(runId: string): Promise<RunState | undefined> {
    const r = await this.engine.query<{ state: unknown }>('SELECT state FROM maestro_runs WHERE run_id = $1', [runId], this.fence);
    const row = r.rows[0];
    if (!row) return undefined;
    const parsed = parseRunState(row.state);
    if (!parsed.ok)
      throw new CheckpointUnreadableError(
        `the checkpoint of run ${runId} in the engine is invalid: ${parsed.issues.join('; ')}`,
        `engine:runs/${runId}`,
        schemaProblem(parsed.issues),
      );
    return parsed.value;
  }

  /** A side file's text, or undefined. */
  async loadFile(runId: string, name: string): Promise<string | undefined> {
    const r = await this.engine.query<{ content: string }>('SELECT content FROM maestro_run_files WHERE run_id = $1 AND name = $2', [
      runId,
      name,
    ]);
    return r.rows[0]?.content;
  }

  /** Every checkpoint that reads (one that does not is left out, as a listing of files leaves it out). */
  async loadAll(): Promise<RunState[]> {
    const r = await this.engine.query<{ state: unknown }>('SELECT state FROM maestro_runs ORDER BY run_id COLLATE "C"');
    return r.rows.flatMap((row) => {
      const parsed = parseRunState(row.state);
      return parsed.ok ? [parsed.value] : [];
    });
  }

  /** Every run id with a checkpoint, sorted (ids sort by time). */
  async list(): Promise<string[]> {
    const r = await this.engine.query<{ run_id: string }>('SELECT run_id FROM maestro_runs ORDER BY run_id COLLATE "C"');
    return r.rows.map((row) => row.run_id);
  }
}
