import type { LiveWorker, PgQueueReads, QueueStats } from '../adapters/pg/queue-reads.js';

export type { LiveWorker, QueueStats } from '../adapters/pg/queue-reads.js';

/** The cluster as the engine sees it: live workers, queue depth, runs held and runs paused for a person. */
export interface EngineStatus {
  readonly url: string;
  readonly workers: readonly LiveWorker[];
  readonly queue: QueueStats;
  readonly running: Awaited<ReturnType<PgQueueReads['runningRuns']>>;
  readonly paused: Awaited<ReturnType<PgQueueReads['pausedRuns']>>;
}

/** Reads the cluster's state from the engine at `url` (its client is loaded only now). */
export async function readEngineStatus(url: string): Promise<EngineStatus> {
  const { openEngine } = await import('./engine.js');
  const { PgQueueReads } = await import('../adapters/pg/queue-reads.js');
  const { redactUrl } = await import('../adapters/pg/engine.js');
  const engine = await openEngine(url, 'maestro status');
  try {
    const queue = new PgQueueReads(engine);
    return {
      url: redactUrl(url),
      workers: await queue.liveWorkers(),
      queue: await queue.stats(),
      running: await queue.runningRuns(),
      paused: await queue.pausedRuns(),
    };
  } finally {
    await engine.close();
  }
}
