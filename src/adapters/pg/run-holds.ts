import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { RunHeldError } from '../../domain/errors.js';
import type { HoldSpan, RunHold, RunHolds } from '../../domain/ports.js';
import { EngineError, type PgEngine, type Queryable } from './engine.js';

/** The first key of the run holds' advisory locks (the second is the run id's hash). */
const RUN_HOLD_CLASS = 7_345_002;
/** Held beside a run's hold for as long as the run (`span: 'run'`): a waiter sees it and is refused at once. */
const RUN_SPAN_CLASS = 7_345_003;

/**
 * Whether no process holds the run, taking its hold for the rest of the caller's transaction: a
 * worker claims only a run nobody decides or resumes at that moment (its claim's lease holds it after).
 */
export async function holdFree(db: Queryable, runId: string): Promise<boolean> {
  const r = await db.query<{ free: boolean }>('SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS free', [RUN_HOLD_CLASS, runId]);
  return r.rows[0]?.free === true;
}

/**
 * A run held in the engine: a session-level advisory lock on a connection of its own, taken with
 * `pg_try_advisory_lock` and kept until the hold is let go. The server lets it go if the holder dies
 * (its connection closes), on whichever machine it was; nothing is refreshed. Two run ids with one
 * hash share a hold: a false "held", never a missed one. A worker's run is held by its claim's lease
 * instead (pg/queue.ts), which it takes only while nobody holds the run (`holdFree`); a foreground
 * resume, holding the run, claims it as a worker does.
 */
export class PgRunHolds implements RunHolds {
  constructor(private readonly engine: PgEngine) {}

  async hold(runId: string, options: { readonly waitMs?: number; readonly span?: HoldSpan } = {}): Promise<RunHold> {
    const client = this.engine.newClient('maestro run hold');
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
      while (!(await tryHold(client, RUN_HOLD_CLASS, runId))) {
        // Two processes that would both run it: the run's hold lasts as long as the run, so waiting only delays the refusal.
        if (Date.now() >= deadline || (options.span === 'run' && (await heldForRun(client, runId)))) throw new RunHeldError(runId);
        await sleep(50);
      }
      if (options.span === 'run') await tryHold(client, RUN_SPAN_CLASS, runId);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    return {
      release: async () => {
        // Closing the session lets the hold go.
        await client.end().catch(() => undefined);
        // Without its connection the hold was gone, and another process may have written meanwhile.
        if (lost) {
          const message = `lost the engine connection that held run ${runId} (${lost.message}): check the run before deciding again`;
          throw new EngineError(message, { cause: lost });
        }
      },
    };
  }
}

/** Whether the run's holder holds it for the whole run: its span lock cannot be taken (one taken here is let go at once). */
async function heldForRun(client: pg.Client, runId: string): Promise<boolean> {
  if (!(await tryHold(client, RUN_SPAN_CLASS, runId))) return true;
  await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [RUN_SPAN_CLASS, runId]).catch(() => undefined);
  return false;
}

async function tryHold(client: pg.Client, lockClass: number, runId: string): Promise<boolean> {
  try {
    const r = await client.query<{ held: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS held', [lockClass, runId]);
    return r.rows[0]?.held === true;
  } catch (error) {
    throw new EngineError(`could not hold run ${runId} in the engine: ${(error as Error).message}`, { cause: error });
  }
}
