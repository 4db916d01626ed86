import { isSafeRunId } from '../domain/audit-retention.js';
import type { Io } from './io.js';
import { openWorkspaceAt } from './open-workspace.js';

/**
 * Why a run with no checkpoint to read is not "no run": `maestro runs` lists it, so a refusal says what
 * it is — a command that did not validate (it ended invalid and never started), a run that ended before
 * its first checkpoint, or a checkpoint that cannot be read. `nothing` says what there is not, e.g.
 * "nothing to decide". Undefined when the workspace has no such run at all.
 */
export async function withoutCheckpoint(
  io: Io,
  workspace: string | undefined,
  runId: string,
  nothing: string,
): Promise<string | undefined> {
  if (!isSafeRunId(runId)) return undefined;
  const known = (await (await openWorkspaceAt(io, workspace)).runs.list({})).find((r) => r.run_id === runId);
  if (!known) return undefined;
  if (known.checkpoint_unreadable !== undefined)
    return `run ${runId}'s checkpoint cannot be read (${known.checkpoint_unreadable}), so there is ${nothing} until it is put right; look with: maestro hitl show ${runId}`;
  if (known.status === 'invalid')
    return `run ${runId} ended invalid: its command did not validate, so it never started and there is ${nothing} (see maestro audit show ${runId})`;
  return `run ${runId} ended ${known.status} before any checkpoint was kept, so there is ${nothing} (see maestro audit show ${runId})`;
}
