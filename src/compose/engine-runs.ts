import { fromAuditText, fromState, type RunListing } from '../adapters/fs/run-catalog.js';
import { showRun } from '../adapters/fs/run-liveness.js';
import type { PgEngine } from '../adapters/pg/engine.js';
import { PgQueueReads } from '../adapters/pg/queue-reads.js';
import { prunePgAudit } from '../adapters/pg/retention.js';
import { PgRunStore } from '../adapters/pg/run-store.js';
import { systemClock } from '../adapters/system/system-clock.js';
import type { Price } from '../domain/budget.js';
import { openEngine } from './engine.js';
import type { Workspace } from './workspace.js';

/** Opens the engine for one read (or one prune), then closes it. */
async function using<T>(url: string, fn: (engine: PgEngine) => Promise<T>): Promise<T> {
  const engine = await openEngine(url, 'maestro runs');
  try {
    return await fn(engine);
  } finally {
    await engine.close();
  }
}

const parseOrNothing = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

const newestFirst = (a: RunListing, b: RunListing): number => b.started_at.localeCompare(a.started_at) || b.run_id.localeCompare(a.run_id);

/**
 * A workspace with an engine, as `runs`, `show` and `audit prune` read it: the engine's runs (their
 * checkpoints, and the runs only their audit log knows) beside the workspace's files (runs from before
 * the engine), the engine's run winning for one id; a run left running that no live worker holds and
 * none is about to take is `interrupted`, as on files. Retention prunes both.
 */
export function withEngineRuns(files: Workspace, url: string): Workspace {
  return {
    ...files,
    runs: {
      list: (prices) => using(url, (engine) => listEngineRuns(engine, files, prices)),
      read: async (runId) => (await using(url, (engine) => new PgRunStore(engine).load(runId))) ?? files.runs.read(runId),
      orchestration: async (runId) => {
        const text = await using(url, (engine) => new PgRunStore(engine).loadFile(runId, 'orchestration.json'));
        return text === undefined ? files.runs.orchestration(runId) : parseOrNothing(text);
      },
      shown: (run) =>
        using(url, async (engine) => {
          const pending = await new PgQueueReads(engine).pendingRuns();
          return showRun(run, { isHeld: async (id: string) => pending.has(id) });
        }),
    },
    pruneAudit: async (options) => {
      const onFiles = await files.pruneAudit(options);
      const inEngine = await using(url, (engine) => prunePgAudit(engine, { ...options, now: systemClock.now() }));
      return {
        cutoff: onFiles.cutoff,
        dryRun: onFiles.dryRun,
        deleted: [...onFiles.deleted, ...inEngine.deleted],
        kept: onFiles.kept + inEngine.kept,
        checkpoints: [...onFiles.checkpoints, ...inEngine.checkpoints],
      };
    },
  };
}

async function listEngineRuns(engine: PgEngine, files: Workspace, prices: Readonly<Record<string, Price>>): Promise<RunListing[]> {
  const queue = new PgQueueReads(engine);
  const pending = await queue.pendingRuns();
  const liveness = { isHeld: async (id: string) => pending.has(id) };
  const runs = new Map<string, RunListing>();
  for (const listing of await files.runs.list(prices)) runs.set(listing.run_id, listing);
  for (const state of await new PgRunStore(engine).loadAll())
    runs.set(state.run_id, fromState(state, prices, await showRun(state, liveness)));
  for (const [runId, text] of await queue.auditOnlyRuns()) {
    const listing = runs.has(runId) ? undefined : fromAuditText(text, runId);
    if (listing) runs.set(runId, listing);
  }
  return [...runs.values()].sort(newestFirst);
}
