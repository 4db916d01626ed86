import { afterAll, beforeAll } from 'vitest';
import { PgEngine } from '../../src/adapters/pg/engine.js';
import { RUN_STATE_VERSION, type RunState } from '../../src/domain/run-state.js';
import { testPostgres, type EmbeddedPostgres } from './embedded-postgres.mjs';

/**
 * For tests of the PostgreSQL adapters: a migrated engine on a fresh database of the suite's
 * PostgreSQL (or one of the file's own outside the suite), handed to `opened` before the file's
 * tests run, and closed after them.
 */
export function useMigratedEngine(options: { max: number }, opened: (engine: PgEngine) => void): void {
  let server: EmbeddedPostgres | undefined;
  let engine: PgEngine | undefined;
  beforeAll(async () => {
    server = await testPostgres();
    engine = PgEngine.open(server.url, { max: options.max });
    await engine.migrate();
    opened(engine);
  }, 60_000);
  afterAll(async () => {
    await engine?.close();
    await server?.stop();
  });
}

/** A run's first checkpoint with nothing done yet, as the engine's stores keep it. */
export function aPgRunState(runId: string, status: RunState['status'] = 'running'): RunState {
  return {
    schemaVersion: RUN_STATE_VERSION,
    run_id: runId,
    status,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    source: `${runId}.json`,
    task_sha256: 'a'.repeat(64),
    command: { task_description: 'x', input_artifacts: [], config: {} } as unknown as RunState['command'],
    steps: [],
    trail: [],
    reroutes: [],
    hitl: [],
  };
}
