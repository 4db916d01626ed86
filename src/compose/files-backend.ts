import { mkdir, readdir, rename } from 'node:fs/promises';
import path from 'node:path';
import { findClaim } from '../adapters/fs/inflight-claims.js';
import { listAuditOnlyRuns } from '../adapters/fs/run-catalog.js';
import { FsRunLiveness } from '../adapters/fs/run-liveness.js';
import { FsWatcherRegistry } from '../adapters/fs/watcher-registry.js';
import { resumeRun, RunNotResumableError } from '../app/process-command.js';
import type { RunOutcome } from '../app/run-deps.js';
import { readPackageVersion } from '../package-info.js';
import type { App } from './app.js';
import type { Backend, ResumeDeps } from './backend.js';

/** A workspace on files: runs held by the processes registered in `.maestro/`, taken up by a running watcher. */
export function filesBackend(app: App): Backend {
  const watchers = new FsWatcherRegistry(path.join(app.paths.state, 'watchers'));
  return {
    continuedBy: 'watcher',
    // A new reader each time: one remembers whether a watcher runs, and one may start at any moment.
    isHeld: (runId) => new FsRunLiveness(app.paths).isHeld(runId),
    isContinued: (runId) => new FsRunLiveness(app.paths).isContinued(runId),
    isClaimed: (runId) => new FsRunLiveness(app.paths).isClaimed(runId),
    // A process resuming one run (run --resume, the console) takes no continued run.
    hasTaker: async () => (await watchers.list()).some((w) => w.alive && w.resuming === undefined),
    depsForRun: () => app.deps,
    resumeHeld: (runId, deps) => resumeHeld(app, runId, deps),
    archiveMemory: (sessionId) => archiveMemoryFiles(app, sessionId),
    durability: async () => ({ kind: 'durable' }),
    runsBeside: (known) => listAuditOnlyRuns(app.paths, known),
    readBeside: async () => undefined,
    queueStats: async () => undefined,
    close: async () => undefined,
  };
}

/** Holding the run: from a dead watcher's claim, or from the checkpoint, claiming a waiting `continue` first. */
async function resumeHeld(app: App, runId: string, deps: ResumeDeps): Promise<RunOutcome> {
  if (await findClaim(app.paths.inflight, runId)) return resumeClaimed(app, runId, deps);
  // The `continue` waiting in the inbox is claimed first, so a watcher cannot resume it too; a watcher
  // that took it first moved it into .maestro/inflight/, where its claim decides.
  if (!(await deps.decisions.claim(runId)) && (await findClaim(app.paths.inflight, runId))) return resumeClaimed(app, runId, deps);
  return resumeRun(runId, deps);
}

/**
 * `run --resume` of a run in `.maestro/inflight/`: refused while its watcher lives; when that watcher
 * is gone, this process takes the claim over (registered like a watcher, so nobody else does), runs
 * the run from its checkpoint and settles the claim as a watcher would.
 */
async function resumeClaimed(app: App, runId: string, deps: ResumeDeps): Promise<RunOutcome> {
  const { FsClaimStore } = await import('../adapters/fs/claim-store.js');
  const { runClaimHere } = await import('../app/run-claim.js');
  const registry = new FsWatcherRegistry(path.join(app.paths.state, 'watchers'));
  const self = FsWatcherRegistry.newIdentity(process.pid);
  const started_at = app.deps.clock.now().toISOString();
  await registry.register({ ...self, started_at, once: true, version: readPackageVersion(), resuming: runId });
  try {
    const claims = new FsClaimStore({ paths: app.paths, self, registry, clock: app.deps.clock });
    const claim = await claims.takeOver(runId);
    if (claim === 'owned') {
      throw new RunNotResumableError(`run ${runId} is claimed by a running watcher (.maestro/inflight/): that watcher finishes it`);
    }
    if (!claim) return resumeRun(runId, deps);
    return await runClaimHere(claim, { run: deps, claims });
  } finally {
    await registry.unregister(self);
  }
}

/** Persona memory (and its archived passages: recall searches the archive) moved to `session_states/archive/<session>/`. */
async function archiveMemoryFiles(app: App, sessionId: string): Promise<string | undefined> {
  const states = app.paths.sessionStates;
  const archive = path.join(states, 'archive', sessionId);
  const files = (await readdir(states).catch(() => [] as string[])).filter((f) => f.endsWith('_session.json'));
  const older = path.join(states, 'archive');
  const histories = (await readdir(older).catch(() => [] as string[])).filter((f) => f.endsWith('_history.jsonl'));
  if (files.length === 0 && histories.length === 0) return undefined;
  await mkdir(archive, { recursive: true });
  for (const f of files) await rename(path.join(states, f), path.join(archive, f));
  for (const f of histories) await rename(path.join(older, f), path.join(archive, f));
  // Every file moved is counted: the session states and the history archives that went with them.
  const moved = files.length + histories.length;
  return `persona memory archived to ${app.paths.relative(archive)}/ (${moved} file(s)); the personas start fresh`;
}
