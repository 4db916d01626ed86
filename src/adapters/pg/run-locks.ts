import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { RunBusyError } from '../../domain/errors.js';
import type { RunLocks } from '../../domain/ports.js';
import { EngineError, type PgEngine } from './engine.js';

/** The first key of the run locks' advisory locks (the second is the run id's hash). */
const RUN_LOCK_CLASS = 7_345_002;

/**
 * A run held in the engine: a session-level advisory lock on a connection of its own, taken with
 * `pg_try_advisory_lock` and kept until `fn` ends. The server lets it go if the holder dies (its
 * connection closes), on whichever machine it was. Two run ids with one hash share a lock: a false
 * "busy", never a missed one.
 */
export class PgRunLocks implements RunLocks {
  constructor(private readonly engine: PgEngine) {}

  async hold<T>(runId: string, fn: () => Promise<T>, options: { readonly waitMs?: number } = {}): Promise<T> {
    const client = this.engine.newClient('maestro run lock');
    let lost: Error | undefined;
    client.on('error', (error: Error) => {
      lost = error;
    });
    try {
      await client.connect();
    } catch (error) {
      throw new EngineError(`cannot reach the engine to hold run ${runId}: ${(error as Error).message}`, { cause: error });
    }
    try {
      const deadline = Date.now() + (options.waitMs ?? 0);
      while (!(await tryLock(client, runId))) {
        if (Date.now() >= deadline) throw new RunBusyError(runId);
        await sleep(50);
      }
      const result = await fn();
      // Without its connection the lock was gone, and another process may have decided meanwhile.
      if (lost) {
        const message = `lost the engine connection that held run ${runId} (${lost.message}): check the run before deciding again`;
        throw new EngineError(message, { cause: lost });
      }
      return result;
    } finally {
      // Closing the session lets the lock go.
      await client.end().catch(() => undefined);
    }
  }
}

async function tryLock(client: pg.Client, runId: string): Promise<boolean> {
  try {
    const r = await client.query<{ held: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS held', [RUN_LOCK_CLASS, runId]);
    return r.rows[0]?.held === true;
  } catch (error) {
    throw new EngineError(`could not hold run ${runId} in the engine: ${(error as Error).message}`, { cause: error });
  }
}
