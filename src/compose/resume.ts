import type { RunOutcome } from '../app/run-deps.js';
import { RunNotResumableError } from '../app/process-command.js';
import { RunBusyError } from '../domain/errors.js';
import type { RunState } from '../domain/run-state.js';
import type { App } from './app.js';
import type { Backend } from './backend.js';

/**
 * `run --resume` and `hitl decide --run`: resumes a run in this process, holding it for as long as it
 * runs, so of two processes started together exactly one resumes it; the other is refused (exit 2),
 * told that another process resumed it, and writes nothing.
 */
export async function resumeHere(app: App, backend: Backend, runId: string): Promise<RunOutcome> {
  const before = await app.deps.ledger.load(runId).catch(() => undefined);
  try {
    return await app.deps.runLocks.hold(runId, () => backend.resumeHeld(runId));
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
