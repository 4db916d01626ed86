import { describe, expect, it } from 'vitest';
import type { PgEngine } from '../../../src/adapters/pg/engine.js';
import { PgQueue } from '../../../src/adapters/pg/queue-intake.js';
import { PgWorkerSession } from '../../../src/adapters/pg/queue.js';
import { PgQueueReads } from '../../../src/adapters/pg/queue-reads.js';
import { useMigratedEngine } from '../../helpers/pg-engine.js';

let engine: PgEngine;
useMigratedEngine({ max: 4 }, (opened) => {
  engine = opened;
});

/** Ends a session's backend as a `kill -9` of its worker (or a restart of the server) does: its row stays, with stopped_at NULL. */
async function killBackend(session: PgWorkerSession): Promise<void> {
  const row = await engine.query<{ pid: number }>('SELECT backend_pid AS pid FROM maestro_workers WHERE session_id = $1', [session.id]);
  const pid = row.rows[0]?.pid;
  await engine.query('SELECT pg_terminate_backend($1)', [pid]);
  await session.lost;
  // The server ends the backend on its own time: wait until it has left pg_stat_activity (what liveness reads).
  for (let tries = 0; tries < 500; tries++) {
    const left = await engine.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid]);
    if ((left.rowCount ?? 0) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`backend ${pid} did not end`);
}

describe('live workers', () => {
  it('lists only the sessions whose connection lives: a killed worker, and its run, are gone from status', async () => {
    await new PgQueue(engine).submit({
      runId: 'live-1',
      workspaceId: 'ws',
      source: 'live-1.json',
      body: '{}',
      inputHashes: {},
      floorAccept: [],
    });
    const living = await PgWorkerSession.open(engine, { name: 'living' });
    const killed = await PgWorkerSession.open(engine, { name: 'killed' });
    try {
      expect((await killed.claimNext())?.runId).toBe('live-1');
      await killBackend(killed);
      const reads = new PgQueueReads(engine);
      const workers = await reads.liveWorkers();
      expect(workers.map((w) => w.session_id)).toEqual([living.id]);
      expect(workers[0]?.current_run).toBeNull();
      // The same definition the claims use: the killed worker's run is waiting for the next free worker.
      expect(await reads.runningRuns()).toEqual([expect.objectContaining({ run_id: 'live-1', owner: killed.id, owner_alive: false })]);
    } finally {
      await living.close();
      await killed.close();
      await engine.query(`DELETE FROM maestro_queue WHERE run_id = 'live-1'`);
    }
  });

  it('after a reconnect (a new session of the same worker) the old session is not listed beside it', async () => {
    const before = await PgWorkerSession.open(engine, { name: 'k4' });
    await killBackend(before);
    const after = await PgWorkerSession.open(engine, { name: 'k4' });
    try {
      expect((await new PgQueueReads(engine).liveWorkers()).map((w) => w.session_id)).toEqual([after.id]);
    } finally {
      await after.close();
      await before.close();
    }
  });
});
