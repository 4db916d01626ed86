import { readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DecisionInbox } from '../../domain/ports.js';
import { ensurePrivateDir, writeJsonAtomically } from './atomic-file.js';
import type { WorkspacePaths } from './workspace-paths.js';

/**
 * `.maestro/decisions/<run_id>.json`: a `continue` waiting to be resumed. Claimed by an atomic
 * rename, so a watcher and a foreground `--run` never both resume the same run.
 */
export class FsDecisionInbox implements DecisionInbox {
  constructor(private readonly paths: WorkspacePaths) {}

  async post(runId: string, decision: { pause_id: string; decided_at: string }): Promise<void> {
    await ensurePrivateDir(this.paths.decisions);
    await writeJsonAtomically(
      path.join(this.paths.decisions, `${runId}.json`),
      { run_id: runId, decision: 'continue', ...decision },
      { mode: 0o600 },
    );
  }

  async claim(runId: string): Promise<boolean> {
    const file = path.join(this.paths.decisions, `${runId}.json`);
    const claimed = `${file}.claimed-${process.pid}`;
    try {
      await rename(file, claimed);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
    await rm(claimed, { force: true });
    return true;
  }

  async pending(): Promise<string[]> {
    let names: string[];
    try {
      names = (await readdir(this.paths.decisions)).filter((n) => n.endsWith('.json') && !n.startsWith('.'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const withTimes = await Promise.all(
      names.map(async (n) => ({
        n,
        t: await stat(path.join(this.paths.decisions, n)).then(
          (s) => s.mtimeMs,
          () => Number.POSITIVE_INFINITY,
        ),
      })),
    );
    return withTimes.sort((a, b) => a.t - b.t || (a.n < b.n ? -1 : 1)).map(({ n }) => n.slice(0, -'.json'.length));
  }
}
