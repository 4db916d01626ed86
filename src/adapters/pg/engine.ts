import pg from 'pg';
import { AppError } from '../../domain/errors.js';
import { MIGRATIONS, SCHEMA_TABLES, SCHEMA_VERSION } from './migrations.js';

/** The engine cannot be used: unreachable, not migrated, or newer than this maestro. */
export class EngineError extends AppError {
  readonly code = 'ENGINE_UNAVAILABLE' as const;
  /** The connection failed (refused, reset, the server shutting down): trying again later may work; a wrong schema will not. */
  readonly transient: boolean;

  constructor(message: string, options?: { cause?: unknown; transient?: boolean }) {
    super(message, options);
    this.transient = options?.transient === true;
  }
}

/**
 * This process no longer holds the claim on a run (its worker session ended, or another worker took
 * the run over): nothing more may be written for it. The run goes on elsewhere, from its checkpoint.
 */
export class ClaimLostError extends AppError {
  readonly code = 'CLAIM_LOST' as const;
}

/**
 * A worker's hold on one run: every write made for the run commits only if, in the same transaction,
 * the queue row still names this worker session and claim epoch, and that session's database
 * connection is still alive. `lost` is called (once) when a write finds it is not, or when the
 * engine cannot be reached; the worker aborts the run at its last checkpoint.
 */
export interface Fence {
  readonly runId: string;
  readonly owner: string;
  readonly epoch: number;
  lost(reason: string): void;
}

export type Queryable = Pick<pg.PoolClient, 'query'>;

/**
 * A session is alive while its database connection is: the backend (pid, start time) still exists.
 * Its aliases are its own (`alive_w`, `alive_a`): an outer query's `w` passed as %OWNER% must not be
 * shadowed by them (`w.session_id = w.session_id` made every row alive while any one worker was).
 */
export const SESSION_ALIVE_SQL = `EXISTS (SELECT 1 FROM maestro_workers alive_w JOIN pg_stat_activity alive_a ON alive_a.pid = alive_w.backend_pid AND alive_a.backend_start = alive_w.backend_start WHERE alive_w.session_id = %OWNER%)`;

const FENCE_SQL = `SELECT 1 FROM maestro_queue q WHERE q.run_id = $1 AND q.owner = $2 AND q.epoch = $3 AND q.state = 'running' AND ${SESSION_ALIVE_SQL.replace('%OWNER%', 'q.owner')} FOR SHARE OF q`;

/** Arbitrary key of the advisory lock that serialises `maestro engine migrate`. */
const MIGRATION_LOCK = 7_345_001;

/** PostgreSQL: a connection pool plus transactions that can be fenced to a worker's claim. */
export class PgEngine {
  readonly url: string;
  readonly #pool: pg.Pool;
  #closed = false;

  private constructor(url: string, pool: pg.Pool) {
    this.url = url;
    this.#pool = pool;
  }

  /** A pool for `url` (nothing connects until the first query). `name` shows in pg_stat_activity. */
  static open(url: string, options: { name?: string; max?: number } = {}): PgEngine {
    const pool = new pg.Pool({
      connectionString: url,
      max: options.max ?? 4,
      allowExitOnIdle: true,
      application_name: options.name ?? 'maestro',
      connectionTimeoutMillis: 10_000,
    });
    // An idle connection that breaks (the server restarted) must not crash the process: the pool
    // drops it and the next query connects again.
    pool.on('error', () => undefined);
    return new PgEngine(url, pool);
  }

  /** A dedicated connection outside the pool (a worker's session, LISTEN). */
  newClient(name: string): pg.Client {
    return new pg.Client({ connectionString: this.url, application_name: name, connectionTimeoutMillis: 10_000 });
  }

  /** One statement outside a transaction; with a fence, an unreachable engine also ends the claim's run at its checkpoint. */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    sql: string,
    params: unknown[] = [],
    fence?: Fence,
  ): Promise<pg.QueryResult<R>> {
    try {
      return await this.#pool.query<R>(sql, params);
    } catch (error) {
      const wrapped = wrap(error, this.url);
      if (fence && wrapped instanceof EngineError) fence.lost(wrapped.message);
      throw wrapped;
    }
  }

  /**
   * Runs `fn` in one transaction. With a fence, the claim is checked (and share-locked, so no
   * takeover can commit in between) before `fn` runs; a lost claim or a broken connection calls
   * `fence.lost` and throws, and nothing of the transaction is kept.
   */
  async tx<T>(fn: (client: Queryable) => Promise<T>, fence?: Fence): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      const wrapped = wrap(error, this.url);
      fence?.lost(wrapped.message);
      throw wrapped;
    }
    let broken = false;
    // A connection the server ends while it is checked out (a restart) emits 'error' on the client
    // itself, which would crash the process without a listener: the query in flight fails instead.
    const onError = (): void => {
      broken = true;
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      if (fence) {
        const held = await client.query(FENCE_SQL, [fence.runId, fence.owner, fence.epoch]);
        if (held.rowCount !== 1)
          throw new ClaimLostError(`this worker no longer holds run ${fence.runId} (its claim moved on or its engine session ended)`);
      }
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      const wrapped = error instanceof AppError ? error : wrap(error, this.url);
      if (fence && (wrapped instanceof ClaimLostError || wrapped instanceof EngineError)) fence.lost(wrapped.message);
      throw wrapped;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }

  /** Applies the migrations this engine lacks, in order, each in its own transaction; returns those applied. */
  async migrate(): Promise<{ version: number; name: string }[]> {
    const client = await this.#pool.connect().catch((error: unknown) => Promise.reject(wrap(error, this.url)));
    const onError = (): void => undefined; // reported by the query in flight
    client.on('error', onError);
    const applied: { version: number; name: string }[] = [];
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      await client.query(
        'CREATE TABLE IF NOT EXISTS maestro_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const done = new Set((await client.query<{ version: number }>('SELECT version FROM maestro_migrations')).rows.map((r) => r.version));
      for (const m of [...MIGRATIONS].sort((a, b) => a.version - b.version)) {
        if (done.has(m.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query('INSERT INTO maestro_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw new EngineError(`migration ${m.version} (${m.name}) failed: ${(error as Error).message}`, { cause: error });
        }
        applied.push({ version: m.version, name: m.name });
      }
      return applied;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
      client.off('error', onError);
      client.release();
    }
  }

  /** `synchronous_commit` as this engine's connections see it (the server's, the database's or the role's setting). */
  async synchronousCommit(): Promise<string> {
    const r = await this.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
    return r.rows[0]?.synchronous_commit ?? '';
  }

  /** The schema version the engine is at (0: never migrated). */
  async schemaVersion(): Promise<number> {
    const exists = await this.query<{ t: string | null }>("SELECT to_regclass('maestro_migrations')::text AS t");
    if (!exists.rows[0]?.t) return 0;
    const r = await this.query<{ v: number | null }>('SELECT max(version) AS v FROM maestro_migrations');
    return r.rows[0]?.v ?? 0;
  }

  /** The tables of this maestro's schema the engine lacks (dropped by hand: a migration does not create them again). */
  async missingTables(): Promise<string[]> {
    const r = await this.query<{ name: string }>(
      'SELECT name FROM unnest($1::text[]) AS name WHERE to_regclass(name) IS NULL ORDER BY name',
      [[...SCHEMA_TABLES]],
    );
    return r.rows.map((row) => row.name);
  }

  /** Refuses an engine whose schema is not the one this maestro was built for, or lacks one of its tables. */
  async assertReady(): Promise<void> {
    const version = await this.schemaVersion();
    if (version < SCHEMA_VERSION) {
      throw new EngineError(
        `the engine at ${redactUrl(this.url)} is at schema version ${version}, this maestro needs ${SCHEMA_VERSION}: run "maestro engine migrate" first`,
      );
    }
    if (version > SCHEMA_VERSION) {
      throw new EngineError(
        `the engine at ${redactUrl(this.url)} is at schema version ${version}, newer than this maestro knows (${SCHEMA_VERSION}): upgrade maestro`,
      );
    }
    const missing = await this.missingTables();
    if (missing.length > 0) throw new EngineError(`the engine at ${redactUrl(this.url)} is not ready: ${missingTablesText(missing)}`);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.end();
  }
}

/** What a schema with tables dropped by hand needs, for people. */
export function missingTablesText(missing: readonly string[]): string {
  return `it lacks ${missing.join(', ')} (dropped by hand?): "maestro engine migrate" does not create a table again; restore the engine from a backup, or start over on an empty database`;
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(an unparsable engine URL)';
  }
}

/** Why an engine that answers cannot be used as it is (a login it refuses, no such database, a table gone), or undefined. */
function unusable(e: { code?: string; message?: string }): string | undefined {
  const message = e.message ?? e.code ?? 'unknown';
  // 28xxx: the server refused the login; SASL: a password was asked for and none (or a wrong one) was given.
  if (e.code?.startsWith('28') || /^SASL:|password authentication failed/i.test(message))
    return `refuses this login: ${message} (check the user in the URL, and PGPASSWORD or ~/.pgpass)`;
  if (e.code === '3D000') return `has no such database: ${message}`;
  if (e.code === '42P01') return `is not ready: ${message} (a table of its schema is missing; "maestro engine status" says which)`;
  return undefined;
}

/**
 * Connection-level failures (refused, reset, the server shutting down, a lost connection) become a
 * transient EngineError; an engine that answers but cannot be used as it is (`unusable`) one that is
 * not; anything else (a constraint, a bug in a query) goes on as it is.
 */
export function wrap(error: unknown, url: string): Error {
  if (error instanceof AppError) return error;
  const e = error as { code?: string; message?: string };
  const why = unusable(e);
  if (why) return new EngineError(`the engine at ${redactUrl(url)} ${why}`, { cause: error });
  const transient =
    typeof e.code === 'string' &&
    (/^(08|57P)/.test(e.code) || ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH'].includes(e.code));
  const lost =
    /Connection terminated|connection timeout|Client has encountered a connection error|not queryable|Cannot use a pool after calling end/i.test(
      e.message ?? '',
    );
  if (transient || lost)
    return new EngineError(`the engine at ${redactUrl(url)} is unreachable: ${e.message ?? e.code}`, { cause: error, transient: true });
  return error instanceof Error ? error : new Error(String(error));
}
