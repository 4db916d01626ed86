import { engineRejectedName, QUEUE_STATE_OF, type Claim, type Rejection } from '../../domain/queue.js';
import type { RunStatus } from '../../domain/run-state.js';
import { screenRejection } from '../../domain/screen.js';
import { ClaimLostError, type Fence, type PgEngine, type Queryable } from './engine.js';
import { alive, DONE_CHANNEL, type EngineClaim } from './queue.js';

/**
 * Settles a claimed command in the engine (the part of the ClaimStore port that the run-claim use
 * case needs). Every change is fenced to the claim.
 */
export class EngineClaimStore {
  constructor(
    private readonly engine: PgEngine,
    private readonly claim: EngineClaim,
    private readonly fenceOf: Fence,
  ) {}

  async read(): Promise<string> {
    return this.claim.body;
  }

  /**
   * The run ended or paused. The checkpoint that ended it already moved the queue row in its own
   * transaction (run-store.ts), so there is usually nothing left to do; a row still running (an ended
   * run whose checkpoint was written before that rule) follows its checkpoint's status here.
   */
  async release(): Promise<void> {
    await this.engine.tx(async (db) => {
      if ((await this.#heldState(db)) !== 'running') return;
      const r = await db.query<{ status: RunStatus }>('SELECT status FROM maestro_runs WHERE run_id = $1', [this.claim.runId]);
      const next = r.rows[0] ? QUEUE_STATE_OF[r.rows[0].status] : undefined;
      if (!next) return;
      await db.query(
        `UPDATE maestro_queue SET finished_at = now(), delivered_at = NULL, state = $2 WHERE run_id = $1 AND state = 'running'`,
        [this.claim.runId, next],
      );
      await db.query('SELECT pg_notify($1, $2)', [DONE_CHANNEL, this.claim.runId]);
    });
  }

  /** Sets the row aside with the reason (the failed run's checkpoint may have moved it to rejected already: the reason is added). */
  async reject(_claim: Claim, rejection: Rejection): Promise<string | null> {
    const kept = screenRejection(rejection);
    await this.engine.tx(async (db) => {
      const state = await this.#heldState(db);
      if (state !== 'running' && state !== 'rejected')
        throw new ClaimLostError(`run ${this.claim.runId} has already ${state === 'done' ? 'ended' : 'paused'}: it cannot be set aside`);
      await db.query(
        `UPDATE maestro_queue SET state = 'rejected', rejection = $2, finished_at = now(), delivered_at = NULL
          WHERE run_id = $1 AND (state = 'running' OR delivered_at IS NULL)`,
        [this.claim.runId, JSON.stringify(kept)],
      );
      await db.query('SELECT pg_notify($1, $2)', [DONE_CHANNEL, this.claim.runId]);
    });
    // Where the intake moves the file, whole: its workspace id is `host:root` (compose/engine.ts), as scp names a file elsewhere.
    return this.claim.kind === 'decision'
      ? null
      : `${this.claim.workspaceId}/.maestro/rejected/${engineRejectedName(this.claim.source, this.claim.runId)}`;
  }

  /**
   * The queue row's state, locked, when it is still this claim's: the same owner and epoch, and, while
   * it runs, a live session (the fence). A row this claim's own checkpoint moved on keeps its owner and
   * epoch; a row another worker took, or a decision queued again, does not: the claim is lost.
   */
  async #heldState(db: Queryable): Promise<string> {
    const r = await db.query<{ state: string; alive: boolean }>(
      `SELECT q.state, ${alive('q.owner')} AS alive FROM maestro_queue q WHERE q.run_id = $1 AND q.owner = $2 AND q.epoch = $3 FOR UPDATE OF q`,
      [this.claim.runId, this.fenceOf.owner, this.fenceOf.epoch],
    );
    const row = r.rows[0];
    if (!row || (row.state === 'running' && !row.alive) || row.state === 'queued') {
      const lost = new ClaimLostError(
        `this worker no longer holds run ${this.claim.runId} (its claim moved on or its engine session ended)`,
      );
      this.fenceOf.lost(lost.message);
      throw lost;
    }
    return row.state;
  }

  async recordFailure(_claim: Claim, reason: string): Promise<string[]> {
    const r = await this.engine.query<{ failures: string[] }>(
      `UPDATE maestro_queue SET failures = failures || jsonb_build_array($2::text) WHERE run_id = $1 RETURNING failures`,
      [this.claim.runId, reason],
    );
    return r.rows[0]?.failures ?? [reason];
  }
}
