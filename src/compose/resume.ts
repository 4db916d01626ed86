import type { RunOutcome } from '../app/run-deps.js';
import { HOLD_WAIT_MS, RunNotResumableError } from '../app/process-command.js';
import { InvalidInputError, RunHeldError } from '../domain/errors.js';
import type { DecisionAuthor, RunState } from '../domain/run-state.js';
import type { App } from './app.js';
import type { Backend } from './backend.js';

/**
 * `run --resume` and `hitl decide --run`: resumes a run in this process, holding it for as long as it
 * runs, so of two processes started together exactly one resumes it; the other is refused (exit 2),
 * told who has it, and writes nothing.
 */
export async function resumeHere(app: App, backend: Backend, runId: string, by?: DecisionAuthor): Promise<RunOutcome> {
  const before = await app.deps.ledger.load(runId).catch(() => undefined);
  if (!before) throw new RunNotResumableError(`there is no run "${runId}" in this workspace`);
  const { holds, ...held } = app.deps;
  // A run a live watcher or worker has is theirs to finish: no use waiting for it.
  const waitMs = (await backend.isClaimed(runId).catch(() => false)) ? 0 : HOLD_WAIT_MS;
  const hold = await holds.hold(runId, { waitMs, span: 'run' }).catch(async (error: unknown) => {
    if (error instanceof RunHeldError) throw await heldRefusal(backend, error);
    if (error instanceof InvalidInputError) throw new RunNotResumableError(`there is no run "${runId}" in this workspace`);
    throw error;
  });
  try {
    return await backend.resumeHeld(runId, by ? { ...held, resumedBy: by } : held);
  } catch (error) {
    if (!(error instanceof RunNotResumableError)) throw error;
    throw (await whyNotResumed(app, runId, before)) ?? error;
  } finally {
    await hold.release();
  }
}

/** Who has the run, read without holding it: the queue's live taker (it finishes the run), or the process holding it. */
async function heldRefusal(backend: Backend, held: RunHeldError): Promise<RunNotResumableError> {
  const runId = held.runId;
  if (!(await backend.isClaimed(runId).catch(() => false))) return new RunNotResumableError(`${held.message}; nothing changed`);
  return new RunNotResumableError(
    backend.continuedBy === 'watcher'
      ? `run ${runId} is claimed by a running watcher (.maestro/inflight/): that watcher finishes it`
      : `run ${runId} is being run by a worker right now (maestro status shows which): that worker finishes it; nothing changed`,
  );
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
  // Another process is named only when the run was still to be resumed as this one began.
  const meanwhile = before !== undefined && before.status !== now.status ? ': another maestro process finished it meanwhile' : '';
  return new RunNotResumableError(`run ${runId} has already ended (${ended})${meanwhile}; nothing to resume`);
}
