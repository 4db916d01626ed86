import os from 'node:os';
import { fromAuditText, listAuditOnlyRuns, listRuns, readRunState } from '../adapters/fs/run-catalog.js';
import { FsRunLiveness } from '../adapters/fs/run-liveness.js';
import { type EngineClaim, PgWorkerSession } from '../adapters/pg/queue.js';
import { resumeRun, RunNotResumableError } from '../app/process-command.js';
import { interruptClaim, runClaimHere } from '../app/run-claim.js';
import type { RunDeps, RunOutcome } from '../app/run-deps.js';
import type { App } from './app.js';
import type { Backend, ResumeDeps } from './backend.js';
import { workerClaimDeps, type EngineHandle } from './engine.js';

/** A workspace with an engine: runs held by the workers' leases, continued runs queued for whichever worker is free. */
export function engineBackend(app: App, handle: EngineHandle): Backend {
  return {
    continuedBy: 'worker',
    // As `runs` and `status` list it: a continue queued for a worker is about to be taken, not interrupted;
    // a run handed back to the queue (or whose worker died) is interrupted, queued again for the next free worker.
    isHeld: (runId) => handle.reads.isRunPending(runId),
    isRequeued: (runId) => handle.reads.isRunRequeued(runId),
    isClaimed: (runId) => handle.reads.isRunOwned(runId),
    hasTaker: async () => (await handle.reads.liveWorkers()).length > 0,
    depsForRun: (runId) => handle.depsForRun(runId),
    resumeHeld: (runId, deps) => resumeOnEngine(app, handle, runId, deps),
    archiveMemory: async (sessionId) => {
      const archived = await handle.archiveMemory(sessionId);
      return archived > 0 ? `persona memory archived in the engine (${archived} persona(s)); the personas start fresh` : undefined;
    },
    durability: (allowAsync) => handle.durability(allowAsync),
    runsBeside: async (known) => {
      const inEngine = [...(await handle.reads.auditOnlyRuns())].flatMap(([runId, text]) =>
        known.has(runId) ? [] : (fromAuditText(text, runId) ?? []),
      );
      // The workspace's runs from before the engine, as `maestro runs` lists them beside the engine's.
      const seen = new Set([...known, ...inEngine.map((r) => r.run_id)]);
      const onFiles = await listRuns(app.paths, app.deps.config.prices, new FsRunLiveness(app.paths));
      const before = onFiles.filter((r) => !seen.has(r.run_id));
      const logsOnly = await listAuditOnlyRuns(app.paths, new Set([...seen, ...before.map((r) => r.run_id)]));
      return [...inEngine, ...before, ...logsOnly];
    },
    readBeside: (runId) => readRunState(app.paths, runId),
    queueStats: () => handle.reads.stats(),
    close: () => handle.engine.close(),
  };
}

/**
 * `run --resume` and `hitl decide --run` with an engine: this process takes the run as a worker
 * would — a run queued (a continue) or left running by a worker that is gone is claimed in the engine
 * for a session of this process, and run in the foreground with every write fenced to that claim, so
 * no worker can run it at the same time. A run a live worker holds is refused; a run the queue does
 * not hold (started in the foreground, never submitted) resumes from its checkpoint as on files.
 */
async function resumeOnEngine(app: App, handle: EngineHandle, runId: string, deps: ResumeDeps): Promise<RunOutcome> {
  const session = await PgWorkerSession.open(handle.engine, { name: `${os.hostname()}-${process.pid}-foreground` });
  try {
    const claim = await session.claimRun(runId);
    if (claim === 'held')
      throw new RunNotResumableError(
        `run ${runId} is being run by a worker right now (maestro status shows which): that worker finishes it; nothing changed`,
      );
    if (!claim) return await resumeRun(runId, deps);
    return await runHere(app, handle, session, claim, deps.resumedBy);
  } finally {
    await session.close();
  }
}

/** Runs a claim in this process as a worker does; an interrupt (Ctrl-C) hands it back to the queue at its checkpoint. */
async function runHere(
  app: App,
  handle: EngineHandle,
  session: PgWorkerSession,
  claim: EngineClaim,
  resumedBy?: RunDeps['resumedBy'],
): Promise<RunOutcome> {
  const lostClaim = new AbortController();
  const signal = app.deps.signal ? AbortSignal.any([app.deps.signal, lostClaim.signal]) : lostClaim.signal;
  const lost = (reason: string): void => lostClaim.abort(new Error(reason));
  void session.lost.then(lost);
  // Who asked for the resume is named on its record, as on files.
  const base = resumedBy ? { ...app.deps, resumedBy } : app.deps;
  const deps = workerClaimDeps({ base, engine: handle.engine, root: app.paths.root, claim, session, controls: { signal, lost } });
  try {
    const outcome = await runClaimHere(claim, deps);
    // Written where a worker writes it: into the engine, until the workspace's intake writes it back.
    if (!outcome.artifact) return outcome;
    const where = `The artifact is kept in the engine until the workspace's intake (maestro watch) writes it to ${outcome.artifact}`;
    return { ...outcome, message: `${outcome.message.replace(/\.$/, '')}. ${where}` };
  } catch (error) {
    if (app.deps.signal?.aborted && session.alive) {
      // Stopped by a person: recorded, and handed back so a worker (or another --resume) goes on from the checkpoint.
      await interruptClaim(claim, deps, 'interrupted', 'interrupted by a person; handed back to the queue');
      await session.requeue(claim).catch(() => undefined);
    }
    throw error;
  }
}
