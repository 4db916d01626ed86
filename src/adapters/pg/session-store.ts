import type { Clock, SessionLoad, SessionLoadOptions, SessionStore, AppendRunOptions } from '../../domain/ports.js';
import type { Passage } from '../../domain/memory/passages.js';
import {
  appendRun,
  archivedPassages,
  compactSession,
  countMemory,
  emptySessionState,
  holdsRun,
  parseSessionState,
  type RunMemory,
  type SessionState,
} from '../../domain/session-state.js';
import type { Fence, PgEngine, Queryable } from './engine.js';

/**
 * Persona memory in `maestro_sessions`: one versioned row per persona. A run is appended under the
 * row's lock (`SELECT … FOR UPDATE`), re-reading what is there now, so workers on many machines
 * never lose each other's runs; every write bumps `version`. Runs beyond `keepRuns` move to
 * `maestro_session_archive`. A row that no longer parses is moved to the archive and reported.
 */
export class PgSessionStore implements SessionStore {
  constructor(
    private readonly engine: PgEngine,
    private readonly clock: Clock,
    private readonly keepRuns = 30,
    private readonly fence?: Fence,
    /** The memory budget (`history.max_tokens`) and the tokenizer: counts are kept once memory passes the budget. */
    private readonly counting?: { readonly budget: number; readonly count: (text: string) => number },
  ) {}

  async load(personaId: string, options: SessionLoadOptions = {}): Promise<SessionLoad> {
    const r = await this.engine.query<{ state: unknown }>(
      'SELECT state FROM maestro_sessions WHERE persona_id = $1',
      [personaId],
      this.fence,
    );
    const now = this.clock.now().toISOString();
    const row = r.rows[0];
    if (!row) return { state: emptySessionState(personaId, now) };
    const parsed = parseSessionState(row.state);
    if (parsed.ok && parsed.value.persona_id === personaId) return { state: parsed.value };
    const problem = parsed.ok ? `belongs to persona "${parsed.value.persona_id}"` : parsed.issues.slice(0, 3).join('; ');
    if (options.leaveCorrupt)
      return { state: emptySessionState(personaId, now), corrupt: { file: `engine:maestro_sessions/${personaId}`, problem } };
    await this.engine.tx((db) => this.#moveAside(db, personaId, row.state), this.fence);
    return { state: emptySessionState(personaId, now), recovered: { movedTo: `engine:session_archive/${personaId}`, problem } };
  }

  async appendRun(personaId: string, runId: string, memory: RunMemory, options: AppendRunOptions = {}): Promise<SessionLoad['recovered']> {
    const now = this.clock.now().toISOString();
    return this.engine.tx(async (db) => {
      const { state: current, recovered } = await this.#lockRow(db, personaId, now);
      if (options.retry && !holdsRun(current, runId)) {
        // A retry whose run other saves have since moved to the archive: it is saved already.
        const held = await db.query(
          "SELECT 1 FROM maestro_session_archive WHERE persona_id = $1 AND (message::jsonb)->>'run_id' = $2 LIMIT 1",
          [personaId, runId],
        );
        if ((held.rowCount ?? 0) > 0) return recovered;
      }
      const appended = appendRun(current, runId, memory, now);
      const counting = this.counting;
      const { state, moved } = compactSession(counting ? countMemory(appended, counting.budget, counting.count) : appended, this.keepRuns);
      for (const m of moved)
        await db.query('INSERT INTO maestro_session_archive (persona_id, message) VALUES ($1, $2)', [personaId, JSON.stringify(m)]);
      await this.#write(db, personaId, state);
      return recovered;
    }, this.fence);
  }

  async recallArchive(personaId: string, terms: readonly string[], limit: number): Promise<Passage[]> {
    if (terms.length === 0 || limit <= 0) return [];
    // Since the persona's memory was last reset (`maestro session reset` archives it whole, marked).
    const r = await this.engine.query<{ message: unknown }>(
      `SELECT message FROM maestro_session_archive
        WHERE persona_id = $1 AND message ? 'run_id' AND lower(message::text) LIKE ANY($2::text[])
          AND id > COALESCE((SELECT max(id) FROM maestro_session_archive WHERE persona_id = $1 AND message ? 'session_reset'), 0)
        ORDER BY id DESC LIMIT $3`,
      [personaId, terms.map((t) => `%${t.replace(/[\\%_]/g, (c) => `\\${c}`)}%`), limit],
      this.fence,
    );
    return r.rows.reverse().flatMap((row) => archivedPassages(row.message));
  }

  /** Changes a persona's row under its lock, from what it holds now. */
  async update(personaId: string, change: (state: SessionState) => SessionState): Promise<SessionLoad['recovered']> {
    const now = this.clock.now().toISOString();
    return this.engine.tx(async (db) => {
      const { state, recovered } = await this.#lockRow(db, personaId, now);
      await this.#write(db, personaId, change(state));
      return recovered;
    }, this.fence);
  }

  /** A persona's row, locked (`FOR UPDATE`) until the transaction ends, as it is now; a row that no longer parses is moved aside. */
  async #lockRow(db: Queryable, personaId: string, now: string): Promise<SessionLoad> {
    // A placeholder to lock (version 0: `version` counts the writes of a persona's memory): two first
    // writers never overwrite each other.
    await db.query('INSERT INTO maestro_sessions (persona_id, state, version) VALUES ($1, $2, 0) ON CONFLICT (persona_id) DO NOTHING', [
      personaId,
      JSON.stringify(emptySessionState(personaId, now)),
    ]);
    const r = await db.query<{ state: unknown }>('SELECT state FROM maestro_sessions WHERE persona_id = $1 FOR UPDATE', [personaId]);
    const parsed = parseSessionState(r.rows[0]?.state);
    if (parsed.ok && parsed.value.persona_id === personaId) return { state: parsed.value };
    await this.#moveAside(db, personaId, r.rows[0]?.state);
    const problem = parsed.ok ? `belongs to persona "${parsed.value.persona_id}"` : parsed.issues.slice(0, 3).join('; ');
    return { state: emptySessionState(personaId, now), recovered: { movedTo: `engine:session_archive/${personaId}`, problem } };
  }

  async #write(db: Queryable, personaId: string, state: SessionState): Promise<void> {
    await db.query(
      `INSERT INTO maestro_sessions (persona_id, state, version, updated_at) VALUES ($1, $2, 1, now())
       ON CONFLICT (persona_id) DO UPDATE SET state = EXCLUDED.state, version = maestro_sessions.version + 1, updated_at = now()`,
      [personaId, JSON.stringify(state)],
    );
  }

  /** Archives every persona's memory (a new council session); returns how many personas had some. */
  async archiveAll(sessionId: string): Promise<number> {
    return this.engine.tx(async (db) => {
      const r = await db.query<{ persona_id: string; state: unknown }>(
        'SELECT persona_id, state FROM maestro_sessions ORDER BY persona_id FOR UPDATE',
      );
      for (const row of r.rows) {
        await db.query('INSERT INTO maestro_session_archive (persona_id, message) VALUES ($1, $2)', [
          row.persona_id,
          JSON.stringify({ session_reset: sessionId, state: row.state }),
        ]);
      }
      await db.query('DELETE FROM maestro_sessions');
      return r.rows.length;
    });
  }

  async #moveAside(db: Queryable, personaId: string, state: unknown): Promise<void> {
    await db.query('INSERT INTO maestro_session_archive (persona_id, message) VALUES ($1, $2)', [
      personaId,
      JSON.stringify({ corrupt: state ?? null }),
    ]);
    await db.query('DELETE FROM maestro_sessions WHERE persona_id = $1', [personaId]);
  }
}
