import path from 'node:path';
import { findClaim } from '../adapters/fs/inflight-claims.js';
import { FsRunLiveness, showRun, type RunLiveness, type ShownRun } from '../adapters/fs/run-liveness.js';
import { resumeRun, RunNotResumableError } from '../app/process-command.js';
import type { RunOutcome } from '../app/run-deps.js';
import { readPackageVersion } from '../package-info.js';
import type { App } from './app.js';
import { RunBusyError } from '../domain/errors.js';
import type { RunState } from '../domain/run-state.js';

/**
 * `run --resume` and `hitl decide --run`: resumes a run in this process, holding it for as long as it
 * runs, so of two processes started together exactly one resumes it; the other is refused (exit 2),
 * told that another process resumed it, and writes nothing.
 */
export async function resumeHere(app: App, runId: string): Promise<RunOutcome> {
  const before = await app.deps.ledger.load(runId).catch(() => undefined);
  const engine = app.engine;
  // With an engine, the run is taken in the engine's queue as a worker takes it (engine-resume.ts).
  const held = engine ? async () => (await import('./engine-resume.js')).resumeOnEngine(app, engine, runId) : () => resumeHeld(app, runId);
  try {
    return await app.deps.runLocks.hold(runId, held);
  } catch (error) {
    if (error instanceof RunBusyError) {
      throw new RunNotResumableError(`another maestro process is resuming run ${runId} (or deciding its pause) right now; nothing changed`);
    }
    if (!(error instanceof RunNotResumableError)) throw error;
    throw (await whyNotResumed(app, runId, before)) ?? error;
  }
}

/** A refusal that says who moved the run on, when another process did: it was running when this one started, or it has ended. */
async function whyNotResumed(app: App, runId: string, before: RunState | undefined): Promise<RunNotResumableError | undefined> {
  const now = await app.deps.ledger.load(runId).catch(() => undefined);
  if (!now || now.status === 'running') return undefined;
  if (before?.status === 'running') {
    return new RunNotResumableError(`another maestro process resumed run ${runId} meanwhile: it is ${now.status} now; nothing changed`);
  }
  if (now.status === 'paused') return undefined;
  const ended = `${now.status}${now.finished_at ? ` at ${now.finished_at}` : ''}`;
  return new RunNotResumableError(`run ${runId} has already ended (${ended}): another maestro process finished it; nothing to resume`);
}

/** Under the run's lock: from a dead watcher's claim, or from the checkpoint, claiming a waiting `continue` first. */
async function resumeHeld(app: App, runId: string): Promise<RunOutcome> {
  if (await findClaim(app.paths.inflight, runId)) return resumeClaimed(app, runId);
  // The `continue` waiting in the inbox is claimed first, so a watcher cannot resume it too; a watcher
  // that took it first moved it into .maestro/inflight/, where its claim decides.
  if (!(await app.deps.decisions.claim(runId)) && (await findClaim(app.paths.inflight, runId))) return resumeClaimed(app, runId);
  return resumeRun(runId, app.deps);
}

/**
 * `run --resume` of a run in `.maestro/inflight/`: refused while its watcher lives; when that watcher
 * is gone, this process takes the claim over (registered like a watcher, so nobody else does), runs
 * the run from its checkpoint and settles the claim as a watcher would.
 */
async function resumeClaimed(app: App, runId: string): Promise<RunOutcome> {
  const { FsClaimStore } = await import('../adapters/fs/claim-store.js');
  const { FsWatcherRegistry } = await import('../adapters/fs/watcher-registry.js');
  const { runClaimHere } = await import('../app/run-claim.js');
  const registry = new FsWatcherRegistry(path.join(app.paths.state, 'watchers'));
  const self = FsWatcherRegistry.newIdentity(process.pid);
  await registry.register({ ...self, started_at: app.deps.clock.now().toISOString(), once: true, version: readPackageVersion() });
  try {
    const claims = new FsClaimStore({ paths: app.paths, self, registry, clock: app.deps.clock });
    const claim = await claims.takeOver(runId);
    if (claim === 'owned') {
      throw new RunNotResumableError(`run ${runId} is claimed by a running watcher (.maestro/inflight/): that watcher finishes it`);
    }
    if (!claim) return resumeRun(runId, app.deps);
    return await runClaimHere(claim, { run: app.deps, claims });
  } finally {
    await registry.unregister(self);
  }
}

/** Who runs what: the engine's leases (a worker's heartbeat) with an engine, else the workspace's files. */
export function runLiveness(app: App): RunLiveness {
  const engine = app.engine;
  return engine ? { isHeld: (runId) => engine.reads.isRunOwned(runId) } : new FsRunLiveness(app.paths);
}

/** The status a person sees: a run left `running` that nobody holds is `interrupted`, with the command that resumes it. */
export function shownRun(app: App, run: Pick<RunState, 'run_id' | 'status' | 'decision'>): Promise<ShownRun> {
  return showRun(run, runLiveness(app));
}
