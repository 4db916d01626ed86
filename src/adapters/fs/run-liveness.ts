import path from 'node:path';
import { nextStep, shownStatus } from '../../domain/run-liveness.js';
import type { RunLife } from '../../domain/run/transitions.js';
import { FsRunHolds } from './run-holds.js';
import { FsWatcherRegistry } from './watcher-registry.js';
import { exists, findClaim } from './inflight-claims.js';
import type { WorkspacePaths } from './workspace-paths.js';

/** Whether a live process executes a run now (read-only). */
export interface RunLiveness {
  isHeld(runId: string): Promise<boolean>;
  /** Whether a person's `continue` waits for the run (it is to be resumed, not interrupted). */
  isContinued?(runId: string): Promise<boolean>;
  /** Whether a queue hands the run to the next free taker (an engine's run its worker handed back, or left by a worker that died). */
  isRequeued?(runId: string): Promise<boolean>;
}

/** A run's status as shown, with the command that moves it on. */
export interface ShownRun {
  readonly status: string;
  readonly next_step: string | null;
  /** Interrupted, and queued again in the engine: the next free worker resumes it (or `next_step` now). */
  readonly requeued?: true;
}

/**
 * Liveness of a workspace's runs, from the records live processes keep: the holder file of the
 * process executing a run (`.maestro/holders/`); the claim of a watcher that owns the run's command
 * (`.maestro/inflight/`, its owner checked in `.maestro/watchers/`), a recovered run that watcher is
 * about to resume; and a person's `continue` waiting in `.maestro/decisions/` while a watcher lives
 * to take it. Any of them alive means the run is being run, or is about to be.
 */
export class FsRunLiveness implements RunLiveness {
  #anyWatcher: Promise<boolean> | undefined;

  constructor(
    private readonly paths: WorkspacePaths,
    private readonly holds: Pick<FsRunHolds, 'holderOf'> = new FsRunHolds(paths),
    private readonly registry: Pick<FsWatcherRegistry, 'isAlive' | 'list'> = new FsWatcherRegistry(path.join(paths.state, 'watchers')),
  ) {}

  async isHeld(runId: string): Promise<boolean> {
    // A holder file that cannot be read names a process nobody can check: unsure counts as held.
    if (
      await this.holds.holderOf(runId).then(
        (h) => h?.alive,
        () => true,
      )
    )
      return true;
    const claim = await findClaim(this.paths.inflight, runId);
    if (claim?.owner) return this.registry.isAlive(claim.owner);
    return (await this.#decisionWaiting(runId)) && this.#watcherRunning();
  }

  isContinued(runId: string): Promise<boolean> {
    return this.#decisionWaiting(runId);
  }

  /** Whether a live watcher's claim owns the run's command (it runs the run, or is about to). */
  async isClaimed(runId: string): Promise<boolean> {
    const claim = await findClaim(this.paths.inflight, runId);
    return claim?.owner ? this.registry.isAlive(claim.owner) : false;
  }

  async #decisionWaiting(runId: string): Promise<boolean> {
    return SAFE_RUN_ID.test(runId) && exists(path.join(this.paths.decisions, `${runId}.json`));
  }

  /** Asked once per reader: a listing asks about many runs. */
  #watcherRunning(): Promise<boolean> {
    // A process resuming one run (run --resume, the console) takes no continued run: it is no watcher here.
    this.#anyWatcher ??= this.registry.list().then((all) => all.some((w) => w.alive && w.resuming === undefined));
    return this.#anyWatcher;
  }
}

const SAFE_RUN_ID = /^[A-Za-z0-9_-]+$/;

/**
 * The status to show for a run as its checkpoint says it is, and what to do next. Only a run whose
 * checkpoint says `running` needs a look at who holds it: the other statuses are what they say.
 */
export async function showRun(run: RunLife & { readonly run_id: string }, liveness: RunLiveness): Promise<ShownRun> {
  const held = run.status === 'running' && (await liveness.isHeld(run.run_id));
  const continued = run.status === 'running' && !held && ((await liveness.isContinued?.(run.run_id)) ?? false);
  const status = shownStatus(run.status, held, continued);
  const requeued = status === 'interrupted' && ((await liveness.isRequeued?.(run.run_id)) ?? false);
  return { status, next_step: nextStep(run, status), ...(requeued ? { requeued } : {}) };
}
