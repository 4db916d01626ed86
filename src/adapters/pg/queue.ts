import os from 'node:os';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { Acceptance } from '../../domain/floor/floor.js';
import type { Claim } from '../../domain/queue.js';
import { decideRun } from '../../domain/run/policy.js';
import { holdFree } from './run-holds.js';
import { ClaimLostError, EngineError, SESSION_ALIVE_SQL, wrap, type Fence, type PgEngine, type Queryable } from './engine.js';

/** Channels: a command is ready (workers listen), a run's queue row ended or paused (the intake listens). */
export const QUEUE_CHANNEL = 'maestro_queue';
export const DONE_CHANNEL = 'maestro_done';

/** A run whose worker died this many times in a row without its checkpoint advancing is set aside (rejected). */
export const MAX_STALLS = 10;

/** SQL that is true while the worker session `owner` (a column or parameter) has a live database connection. */
export const alive = (owner: string): string => SESSION_ALIVE_SQL.replace('%OWNER%', owner);

/** A claimed queue row, as `claimNext` and `claimRun` return it. */
interface ClaimRow {
  run_id: string;
  source: string;
  body: string;
  input_hashes: Record<string, string>;
  floor_accept: unknown;
  kind: 'command' | 'decision';
  recovered: boolean;
  epoch: number;
  workspace_id: string;
  claimed_at: Date;
}
const CLAIM_COLUMNS = 'run_id, source, body, input_hashes, floor_accept, kind, recovered, epoch, workspace_id, claimed_at';

/** A command the engine handed to this worker session. */
export interface EngineClaim extends Claim {
  readonly owner: string;
  readonly epoch: number;
  readonly body: string;
  readonly workspaceId: string;
  /** sha256 of each input artifact as the intake read it (or `missing:<reason>`). */
  readonly inputHashes: Readonly<Record<string, string>>;
  /** The floor's acceptances of the workspace that submitted it (none when the row carries none that reads: fail closed). */
  readonly floorAccept: readonly Acceptance[];
}

/**
 * One worker's session with the engine: a dedicated connection that is the worker's liveness (while
 * it is open, the claims it holds are its own; when it closes, by a crash or `kill -9`, the server
 * ends the backend and any other worker may take them over at once) and that LISTENs for new work.
 */
export class PgWorkerSession {
  readonly id: string;
  readonly lost: Promise<string>;
  #alive = true;
  #onWork: () => void = () => undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #markLost: (why: string) => void = () => undefined;

  private constructor(
    private readonly engine: PgEngine,
    private readonly client: pg.Client,
    id: string,
  ) {
    this.id = id;
    this.lost = new Promise((resolve) => {
      this.#markLost = (why) => {
        if (!this.#alive) return;
        this.#alive = false;
        clearInterval(this.#heartbeat);
        this.#onWork();
        resolve(why);
      };
    });
  }

  static async open(engine: PgEngine, options: { name: string }): Promise<PgWorkerSession> {
    const id = `${options.name}.${randomUUID().slice(0, 8)}`;
    const client = engine.newClient(`maestro worker ${id}`);
    client.on('error', () => undefined); // reported through `lost`
    try {
      await client.connect();
      await client.query(
        `INSERT INTO maestro_workers (session_id, name, host, pid, backend_pid, backend_start)
         SELECT $1, $2, $3, $4, pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()`,
        [id, options.name, os.hostname(), process.pid],
      );
      await client.query(`LISTEN ${QUEUE_CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      // An engine that cannot be used as it is (a login refused, a table gone) is said as it is: waiting will not mend it.
      const wrapped = wrap(error, engine.url);
      if (wrapped instanceof EngineError && !wrapped.transient) throw wrapped;
      throw new EngineError(`could not open a worker session on the engine: ${(error as Error).message}`, {
        cause: error,
        transient: true,
      });
    }
    const session = new PgWorkerSession(engine, client, id);
    client.on('notification', () => session.#onWork());
    client.on('error', (error: Error) => session.#markLost(`the engine connection failed: ${error.message}`));
    client.on('end', () => session.#markLost('the engine connection closed'));
    session.#heartbeat = setInterval(() => {
      client
        .query('UPDATE maestro_workers SET last_seen = now() WHERE session_id = $1', [id])
        .catch((error: Error) => session.#markLost(`the engine connection failed: ${error.message}`));
    }, 5_000).unref();
    return session;
  }

  get alive(): boolean {
    return this.#alive;
  }

  /**
   * Takes the oldest queued command, after handing back to the queue every claim whose worker
   * session is gone (a crashed worker; one that died with a run too often is set aside instead).
   * One transaction: the claim, its epoch and this worker's current run commit together.
   */
  async claimNext(): Promise<EngineClaim | undefined> {
    if (!this.#alive) throw new ClaimLostError('the worker session has ended');
    return this.engine.tx(async (db) => {
      // A worker that died while its run still advanced (a checkpoint after the claim) says nothing
      // about the run; one that died before any progress counts as a stall, and a run that stalls
      // MAX_STALLS times in a row (it may be what kills its workers) is set aside for a person. Its
      // checkpoint ends with it, in this transaction, as a failure (`error`, RUN_FAILED_REPEATEDLY):
      // it is not interrupted, and resuming it would run the command again beside its requeued copy.
      const { decision } = decideRun({ kind: 'failed_repeatedly' });
      await db.query(
        `WITH orphans AS (
           SELECT o.run_id, CASE WHEN EXISTS (SELECT 1 FROM maestro_runs r WHERE r.run_id = o.run_id AND r.updated_at > o.claimed_at) THEN 0 ELSE o.stalls + 1 END AS stalls
             FROM maestro_queue o WHERE o.state = 'running' AND NOT ${alive('o.owner')} FOR UPDATE OF o SKIP LOCKED),
         moved AS (
         UPDATE maestro_queue q
            SET stalls = orphans.stalls, recovered = true, owner = NULL, delivered_at = NULL,
                state = CASE WHEN orphans.stalls >= $1 THEN 'rejected' ELSE 'queued' END,
                rejection = CASE WHEN orphans.stalls >= $1 THEN jsonb_build_object('status', 'error', 'reason_code', $2::text,
                  'message', q.source || ': ' || orphans.stalls || ' workers in a row ended while running it, before its checkpoint advanced; it was set aside',
                  'issues', jsonb_build_array('(run): ' || orphans.stalls || ' workers in a row ended before its checkpoint advanced'), 'audit_log', NULL) ELSE q.rejection END
           FROM orphans WHERE q.run_id = orphans.run_id RETURNING q.run_id, q.state, orphans.stalls)
         UPDATE maestro_runs r SET status = 'error', updated_at = now(),
                state = r.state || jsonb_build_object('status', 'error', 'decision', $3::jsonb,
                  'trail', coalesce(r.state->'trail', '[]'::jsonb) || jsonb_build_array($3::jsonb),
                  'finished_at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                  'summary', 'set aside: ' || moved.stalls || ' workers in a row ended while running it, before its checkpoint advanced (maestro requeue puts its command back, as a new run)')
           FROM moved WHERE moved.state = 'rejected' AND r.run_id = moved.run_id AND r.status = 'running'`,
        [MAX_STALLS, decision.reason_code, JSON.stringify(decision)],
      );
      // A run a process holds (deciding or resuming it) is left for a later look (workers look every few seconds).
      const held: string[] = [];
      for (;;) {
        const next = await db.query<{ run_id: string }>(
          `SELECT run_id FROM maestro_queue WHERE state = 'queued' AND ${alive('$1::text')} AND run_id <> ALL($2::text[])
            ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED`,
          [this.id, held],
        );
        const runId = next.rows[0]?.run_id;
        if (runId === undefined) return undefined;
        if (await holdFree(db, runId)) return this.#take(db, runId);
        held.push(runId);
      }
    });
  }

  /** Takes a row (locked by the caller) for this session: a new epoch, and this worker's current run, in the caller's transaction. */
  async #take(db: Queryable, runId: string): Promise<EngineClaim | undefined> {
    const r = await db.query<ClaimRow>(
      `UPDATE maestro_queue SET state = 'running', owner = $1, epoch = epoch + 1, claims = claims + 1, claimed_at = now(),
              recovered = (recovered OR state = 'running')
        WHERE run_id = $2 RETURNING ${CLAIM_COLUMNS}`,
      [this.id, runId],
    );
    const row = r.rows[0];
    if (!row) return undefined;
    await db.query('UPDATE maestro_workers SET current_run = $2 WHERE session_id = $1', [this.id, runId]);
    return {
      runId: row.run_id,
      source: row.source,
      claimedAt: new Date(row.claimed_at).toISOString(),
      recovered: row.recovered,
      kind: row.kind,
      owner: this.id,
      epoch: row.epoch,
      body: row.body,
      workspaceId: row.workspace_id,
      inputHashes: row.input_hashes,
      floorAccept: Acceptance.array().safeParse(row.floor_accept).data ?? [],
    };
  }

  /**
   * Takes one named run for this session (a foreground `run --resume` or `hitl decide --run`): a run
   * queued (a continue, or handed back) or left running by a worker whose session is gone. `held`:
   * a live worker has it; undefined: the engine has no such run to take (no queue row, or it has
   * ended or paused). One transaction, as `claimNext`.
   */
  async claimRun(runId: string): Promise<EngineClaim | 'held' | undefined> {
    if (!this.#alive) throw new ClaimLostError('the worker session has ended');
    return this.engine.tx(async (db) => {
      const row = (
        await db.query<{ state: string; live: boolean }>(
          `SELECT q.state, (q.state = 'running' AND ${alive('q.owner')}) AS live FROM maestro_queue q WHERE q.run_id = $1 FOR UPDATE OF q`,
          [runId],
        )
      ).rows[0];
      if (!row || (row.state !== 'queued' && row.state !== 'running')) return undefined;
      return row.live ? 'held' : this.#take(db, runId);
    });
  }

  /** Calls `wake` on each notification of new work, and when the session is lost. */
  onWork(wake: () => void): void {
    this.#onWork = wake;
  }

  /** The fence for writes made on behalf of a claim. */
  fence(claim: EngineClaim, lost: (reason: string) => void): Fence {
    return { runId: claim.runId, owner: this.id, epoch: claim.epoch, lost };
  }

  /** Hands an interrupted claim back to the queue (this worker is stopping); its checkpoint resumes elsewhere. */
  async requeue(claim: EngineClaim): Promise<void> {
    await this.engine.query(
      `UPDATE maestro_queue SET state = 'queued', owner = NULL, recovered = true WHERE run_id = $1 AND owner = $2 AND epoch = $3 AND state = 'running'`,
      [claim.runId, this.id, claim.epoch],
    );
    await this.engine.query('SELECT pg_notify($1, $2)', [QUEUE_CHANNEL, claim.runId]);
  }

  async setCurrent(runId: string | null): Promise<void> {
    await this.engine.query('UPDATE maestro_workers SET current_run = $2 WHERE session_id = $1', [this.id, runId]).catch(() => undefined);
  }

  async close(): Promise<void> {
    clearInterval(this.#heartbeat);
    if (this.#alive)
      await this.client
        .query('UPDATE maestro_workers SET stopped_at = now(), current_run = NULL WHERE session_id = $1', [this.id])
        .catch(() => undefined);
    this.#alive = false;
    await this.client.end().catch(() => undefined);
  }
}
