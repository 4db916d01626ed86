import { writeFileAtomically } from '../adapters/fs/atomic-file.js';
import { requeueAllRejected } from '../adapters/fs/rejected.js';
import { pruneAuditLogs } from '../adapters/fs/audit-store.js';
import path from 'node:path';
import { fromAuditText, fromState, listRuns, readRunOrchestration, readRunState, type RunListing } from '../adapters/fs/run-catalog.js';
import { FsRunLiveness, showRun, type ShownRun } from '../adapters/fs/run-liveness.js';
import { FsWatcherRegistry } from '../adapters/fs/watcher-registry.js';
import { readWorkspaceStatus, type WorkspaceStatus } from '../adapters/fs/workspace-status.js';
import { sha256 } from '../adapters/system/hashing.js';
import type { Price } from '../domain/budget.js';
import type { RunState } from '../domain/run-state.js';
import { systemClock } from '../adapters/system/system-clock.js';
import { assertWorkspace } from '../adapters/fs/workspace-guard.js';
import { WorkspacePaths } from '../adapters/fs/workspace-paths.js';
import { listRejected as readRejected, type RejectedCommand } from '../adapters/fs/rejected.js';
import { scaffoldWorkspace, type ScaffoldResult } from '../adapters/fs/workspace-scaffold.js';
import type { PgEngine } from '../adapters/pg/engine.js';
import type { LiveWorker, PgQueueReads, QueueStats } from '../adapters/pg/queue-reads.js';
import { loadWorkspaceConfig, resolveEngineUrl } from '../config.js';
import { type AuditSource, openAuditSource } from './audit.js';
import { readRouteOutages, type RouteOutage } from './route-breaker.js';

export type { ScaffoldReport, ScaffoldResult } from '../adapters/fs/workspace-scaffold.js';
export type { RejectedCommand } from '../adapters/fs/rejected.js';
export type { RunListing } from '../adapters/fs/run-catalog.js';
export type { ShownRun } from '../adapters/fs/run-liveness.js';
export type { WorkspaceStatus } from '../adapters/fs/workspace-status.js';
export type { WorkspacePaths } from '../adapters/fs/workspace-paths.js';
export type { LiveWorker, QueueStats } from '../adapters/pg/queue-reads.js';
export type { AuditSource } from './audit.js';
export type { RouteOutage } from './route-breaker.js';

/** The cluster as the engine sees it: live workers, queue depth, runs held and paused for a person, the latest runs. */
export interface ClusterStatus {
  readonly url: string;
  readonly workers: readonly LiveWorker[];
  readonly queue: QueueStats;
  readonly running: Awaited<ReturnType<PgQueueReads['runningRuns']>>;
  readonly paused: Awaited<ReturnType<PgQueueReads['pausedRuns']>>;
  /** The engine's runs with this workspace's, newest first. */
  readonly recent: readonly RunListing[];
}

/**
 * A workspace on files, as the subcommands that do not run councils use it: where its parts are,
 * and what can be done to them. The CLI asks here; only the composition root knows the adapters.
 */
export interface Workspace {
  readonly paths: WorkspacePaths;
  /** Rejected commands (`.maestro/rejected/`) and how to put one back into `commands/`. */
  readonly rejected: {
    list(): Promise<RejectedCommand[]>;
    /**
     * Moves them back, all or none (one that still does not read refuses the lot, nothing moved);
     * returns each one's name in `commands/` (never over a file there).
     */
    requeue(names: readonly string[]): Promise<{ name: string; to: string }[]>;
  };
  /** The workspace's runs, newest first, each with the status a person sees (a run nobody holds is `interrupted`). */
  readonly runs: {
    list(prices: Readonly<Record<string, Price>>): Promise<RunListing[]>;
    read(runId: string): Promise<RunState | undefined>;
    shown(run: Pick<RunState, 'run_id' | 'status' | 'decision'>): Promise<ShownRun>;
    /** The run's orchestration result (seed 001), when it was arbitrated. */
    orchestration(runId: string): Promise<unknown>;
  };
  /** Watchers, queue, runs in flight, paused and interrupted, the last runs. */
  status(options: { recent: number }): Promise<WorkspaceStatus>;
  /** Deletes the audit logs (and ended runs' checkpoints) last written before the retention period. */
  pruneAudit(options: { retentionDays: number; dryRun?: boolean }): ReturnType<typeof pruneAuditLogs>;
  /** The routes the watcher's breaker holds as down, with the queued commands (of `queued`) that wait for each. */
  routesDown(queued: readonly string[]): Promise<RouteOutage[]>;
  /** The audit logs, from the engine when the workspace has one, else from its files; close it when done. */
  audit(): Promise<AuditSource>;
  /** With an engine, the cluster as it sees it and the `recent` latest runs; undefined on files. */
  cluster(recent: number): Promise<ClusterStatus | undefined>;
}

/**
 * The workspace at `dir`, refused with the "not a maestro workspace … maestro init" message when it
 * is not one. With an engine (a config that does not read is reported by the commands that need it),
 * its runs and their retention are read in the engine too.
 */
export async function openWorkspace(dir: string, env: Readonly<Record<string, string | undefined>>): Promise<Workspace> {
  const paths = new WorkspacePaths(dir);
  await assertWorkspace(paths);
  const files = onFiles(paths, env);
  const config = await loadWorkspaceConfig(paths.config).catch(() => undefined);
  const url = config ? resolveEngineUrl(config, env) : undefined;
  return url ? withEngine(files, url) : files;
}

function onFiles(paths: WorkspacePaths, env: Readonly<Record<string, string | undefined>>): Workspace {
  const liveness = new FsRunLiveness(paths);
  return {
    paths,
    runs: {
      list: (prices) => listRuns(paths, prices, liveness),
      read: (runId) => readRunState(paths, runId),
      shown: (run) => showRun(run, liveness),
      orchestration: (runId) => readRunOrchestration(paths, runId),
    },
    status: ({ recent }) => readWorkspaceStatus(paths, new FsWatcherRegistry(path.join(paths.state, 'watchers')), { recent }),
    rejected: { list: () => readRejected(paths), requeue: (names) => requeueAllRejected(paths, names) },
    pruneAudit: ({ retentionDays, dryRun }) => pruneAuditLogs({ paths, retentionDays, now: systemClock.now(), dryRun: dryRun === true }),
    routesDown: (queued) => readRouteOutages(paths, env, queued),
    audit: () => openAuditSource(paths, env),
    // No cluster on files; a config that does not read is still reported here, as with an engine.
    cluster: async () => {
      await loadWorkspaceConfig(paths.config);
      return undefined;
    },
  };
}

/** Opens the engine for one read (or one prune), then closes it; its client is loaded only now. */
async function using<T>(url: string, fn: (engine: PgEngine, queue: PgQueueReads) => Promise<T>): Promise<T> {
  const { openEngine } = await import('./engine.js');
  const { PgQueueReads } = await import('../adapters/pg/queue-reads.js');
  const engine = await openEngine(url, 'maestro runs');
  try {
    return await fn(engine, new PgQueueReads(engine));
  } finally {
    await engine.close();
  }
}

const newestFirst = (a: RunListing, b: RunListing): number => b.started_at.localeCompare(a.started_at) || b.run_id.localeCompare(a.run_id);

/**
 * A workspace with an engine, as `runs`, `show`, `status` and `audit prune` read it: the engine's runs
 * (their checkpoints, and the runs only their audit log knows) beside the workspace's files (runs from
 * before the engine), the engine's run winning for one id; a run left running that no live worker
 * holds and none is about to take is `interrupted`, as on files. Retention prunes both.
 */
function withEngine(files: Workspace, url: string): Workspace {
  const store = async (engine: PgEngine) => new (await import('../adapters/pg/run-store.js')).PgRunStore(engine);
  const runs: Workspace['runs'] = {
    list: (prices) => using(url, (engine, queue) => listEngineRuns(engine, queue, files, prices)),
    read: async (runId) => (await using(url, async (engine) => (await store(engine)).load(runId))) ?? files.runs.read(runId),
    orchestration: async (runId) => {
      const text = await using(url, async (engine) => (await store(engine)).loadFile(runId, 'orchestration.json'));
      return text === undefined ? files.runs.orchestration(runId) : parseOrNothing(text);
    },
    shown: (run) =>
      using(url, async (_engine, queue) => {
        return showRun(run, { isHeld: (id) => queue.isRunPending(id), isRequeued: (id) => queue.isRunRequeued(id) });
      }),
  };
  return {
    ...files,
    runs,
    pruneAudit: async (options) => {
      const { prunePgAudit } = await import('../adapters/pg/retention.js');
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
    status: async (options) => {
      const base = await files.status(options);
      if (base.inflight.length === 0) return base;
      return { ...base, inflight: await using(url, (engine, queue) => claimsInEngine(base.inflight, engine, queue)) };
    },
    cluster: async (recent) => {
      const { redactUrl } = await import('../adapters/pg/engine.js');
      const cluster = await using(url, async (_engine, queue) => ({
        url: redactUrl(url),
        workers: await queue.liveWorkers(),
        queue: await queue.stats(),
        running: await queue.runningRuns(),
        paused: await queue.pausedRuns(),
      }));
      return { ...cluster, recent: (await runs.list((await loadWorkspaceConfig(files.paths.config)).prices)).slice(0, recent) };
    },
  };
}

async function listEngineRuns(
  engine: PgEngine,
  queue: PgQueueReads,
  files: Workspace,
  prices: Readonly<Record<string, Price>>,
): Promise<RunListing[]> {
  const { PgRunStore } = await import('../adapters/pg/run-store.js');
  const pending = await queue.pendingRuns();
  const requeued = await queue.requeuedRuns();
  const liveness = { isHeld: async (id: string) => pending.has(id), isRequeued: async (id: string) => requeued.has(id) };
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

/**
 * The intake's claims (`.maestro/inflight/`) as the engine has their runs: a claim file says only that
 * the intake took the command; whether it runs, was handed back, or ended is the engine's to say.
 */
async function claimsInEngine(
  inflight: WorkspaceStatus['inflight'],
  engine: PgEngine,
  queue: PgQueueReads,
): Promise<WorkspaceStatus['inflight'][number][]> {
  const { PgRunStore } = await import('../adapters/pg/run-store.js');
  const store = new PgRunStore(engine);
  const rows = await queue.queueRows(inflight.map((f) => f.run_id));
  const liveness = { isHeld: (id: string) => queue.isRunPending(id), isRequeued: (id: string) => queue.isRunRequeued(id) };
  const out = [];
  for (const f of inflight) {
    const state = await store.load(f.run_id);
    const shown = state && (await showRun(state, liveness));
    const row = rows.get(f.run_id);
    out.push({ ...f, run_status: shown?.status ?? null, steps_done: state?.steps.length ?? 0, waiting: [], engine: row ?? null });
  }
  return out;
}

function parseOrNothing(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** `maestro init`: sets up a workspace (new, or in an existing project), adding only what is missing. */
export function initWorkspace(target: string, packageRoot: string): Promise<ScaffoldResult> {
  return scaffoldWorkspace(target, packageRoot);
}

/** Writes a file whole or not at all (exports of audit logs). */
export function writeFileWhole(file: string, content: string, mode: number): Promise<void> {
  return writeFileAtomically(file, content, { mode });
}

/** The digest every audit chain uses. */
export const auditDigest = sha256;
