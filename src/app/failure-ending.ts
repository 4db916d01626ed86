import { failureReason } from '../domain/codes.js';
import { AppError, InvalidInputError, StorageError, storageFailureText } from '../domain/errors.js';
import { decideRun } from '../domain/run/policy.js';
import type { SettleOptions } from './settle-run.js';

/** An ending met outside the council's steps, as the one applier (settleRun, settleOutside) takes it. */
export type OutsideEnding = Omit<SettleOptions, 'run' | 'deps'>;

/**
 * What an error that ended a run (or a claim) outside its steps means, by its row of the policy table:
 * a failed write ends the run loudly, naming the path and the errno, and `run --resume` takes it up
 * again once there is room; a command that could not be read as one is refused unread; anything else
 * (a bug) ends it as failed, with the error's code.
 */
export function failureEnding(error: unknown, at: { readonly runId: string; readonly source?: string }): OutsideEnding {
  if (error instanceof StorageError) {
    const fix =
      error.errno === 'ENOSPC' ? 'the disk is full; free space and resume it' : error.errno ? 'check the file system' : 'then resume it';
    return {
      ending: decideRun({ kind: 'storage_failed' }),
      message: `storage failed: ${storageFailureText(error)} — ${fix} with: maestro run --resume ${at.runId}`,
      event: 'RUN_FAILED',
      details: { errno: error.errno ?? null, path: error.path },
      problems: [`${error.path}: ${error.errno ?? 'write failed'}`],
    };
  }
  const name = error instanceof Error ? error.name : typeof error;
  if (error instanceof InvalidInputError) {
    const paths = error.issues.map((i) => i.split(':')[0] ?? '');
    const message = `${at.source ?? `run ${at.runId}`} was refused unread`;
    const details = { error: name, issue_paths: paths };
    return { ending: decideRun({ kind: 'refused_unread' }), message, event: 'COMMAND_REJECTED', details, problems: [...error.issues] };
  }
  const message = `the run failed: ${error instanceof Error ? error.message : String(error)}`;
  const reason = failureReason(error instanceof AppError ? error.code : undefined);
  return {
    ending: decideRun({ kind: 'internal_error', reason }),
    message,
    event: 'RUN_FAILED',
    details: { error: name },
    problems: [`(run): ${message}`],
  };
}
