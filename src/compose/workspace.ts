import { writeFileAtomically } from '../adapters/fs/atomic-file.js';
import { requeueRejected } from '../adapters/fs/rejected.js';
import { pruneAuditLogs } from '../adapters/fs/audit-store.js';
import path from 'node:path';
import { listRuns, readRunOrchestration, readRunState, type RunListing } from '../adapters/fs/run-catalog.js';
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

export type { ScaffoldReport, ScaffoldResult } from '../adapters/fs/workspace-scaffold.js';
export type { RejectedCommand } from '../adapters/fs/rejected.js';
export type { RunListing } from '../adapters/fs/run-catalog.js';
export type { ShownRun } from '../adapters/fs/run-liveness.js';
export type { WorkspaceStatus } from '../adapters/fs/workspace-status.js';
export type { WorkspacePaths } from '../adapters/fs/workspace-paths.js';

/**
 * A workspace on files, as the subcommands that do not run councils use it: where its parts are,
 * and what can be done to them. The CLI asks here; only the composition root knows the adapters.
 */
export interface Workspace {
  readonly paths: WorkspacePaths;
  /** Rejected commands (`.maestro/rejected/`) and how to put one back into `commands/`. */
  readonly rejected: {
    list(): Promise<RejectedCommand[]>;
    /** Moves it back; returns its name in `commands/` (never over a file there). */
    requeue(name: string): Promise<string>;
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
}

/** The workspace at `dir`, refused with the "not a maestro workspace … maestro init" message when it is not one. */
export async function openWorkspace(dir: string): Promise<Workspace> {
  const paths = new WorkspacePaths(dir);
  await assertWorkspace(paths);
  return workspaceAt(paths);
}

/** The paths of a folder that may or may not be a workspace yet (engine set-up reads its config). */
export function workspacePathsOf(dir: string): WorkspacePaths {
  return new WorkspacePaths(dir);
}

function workspaceAt(paths: WorkspacePaths): Workspace {
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
    rejected: { list: () => readRejected(paths), requeue: (name) => requeueRejected(paths, name) },
    pruneAudit: ({ retentionDays, dryRun }) => pruneAuditLogs({ paths, retentionDays, now: systemClock.now(), dryRun: dryRun === true }),
  };
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
