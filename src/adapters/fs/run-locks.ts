import { stat } from 'node:fs/promises';
import path from 'node:path';
import { RunBusyError } from '../../domain/errors.js';
import type { RunLocks } from '../../domain/ports.js';
import { DEFAULT_STALE_MS, FileLockBusyError, withFileLock, type FileLockOptions } from './file-lock.js';
import type { WorkspacePaths } from './workspace-paths.js';

const RUN_ID = /^[A-Za-z0-9_-]+$/;

/**
 * `.maestro/runs/<run_id>/run.lock`: held (see file-lock.ts) by the process that decides a run's
 * pause (`hitl decide`) or resumes it in the foreground (`run --resume`, `hitl decide --run`), for
 * as long as it does. Watchers need none: their claims in `.maestro/inflight/` are exclusive.
 */
export class FsRunLocks implements RunLocks {
  constructor(
    private readonly paths: WorkspacePaths,
    private readonly options: Pick<FileLockOptions, 'staleMs'> = {},
  ) {}

  async hold<T>(runId: string, fn: () => Promise<T>, options: { readonly waitMs?: number } = {}): Promise<T> {
    // No such run: nothing to hold, and `fn` says so (it finds no checkpoint).
    if (!RUN_ID.test(runId) || !(await isFolder(this.paths.runDir(runId)))) return fn();
    const lockFile = path.join(this.paths.runDir(runId), 'run.lock');
    try {
      return await withFileLock(lockFile, () => fn(), { ...this.options, waitMs: options.waitMs ?? 0 });
    } catch (error) {
      // Only this run's lock: a busy lock met inside `fn` (persona memory) is that one's failure.
      if (error instanceof FileLockBusyError && error.path === lockFile) {
        const staleSeconds = Math.round((this.options.staleMs ?? DEFAULT_STALE_MS) / 1000);
        throw new RunBusyError(runId, `if that process was killed, its hold lapses ${staleSeconds} s after it last refreshed it`);
      }
      throw error;
    }
  }
}

async function isFolder(dir: string): Promise<boolean> {
  return stat(dir).then(
    (info) => info.isDirectory(),
    () => false,
  );
}
