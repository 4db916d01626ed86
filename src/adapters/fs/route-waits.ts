import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { ProgressEvent, RouteWait } from '../../domain/ports.js';
import { ensurePrivateDir, writeJsonAtomically } from './atomic-file.js';

/** One call of a run held back by its route, as `maestro status` shows it. */
export type ShownWait = RouteWait & { readonly persona: string; readonly since: string };

const RUN_FILE = /^([A-Za-z0-9_-]+)\.json$/;

/**
 * `.maestro/waits/<run_id>.json`: which calls of a run in flight are waiting for their route's limits
 * (a wait that lasted a moment), so `maestro status`, in another process, can say so. Written by the
 * watcher or worker from its runs' progress, off the call path (a failed write is only a missing line
 * in `status`), and removed when the wait or the run ends.
 */
export class FsRouteWaits {
  readonly #dir: string;
  readonly #runs = new Map<string, Map<string, ShownWait>>();
  /** Writes of each run's file, one after another, so the last state wins. */
  readonly #writes = new Map<string, Promise<void>>();

  constructor(stateDir: string) {
    this.#dir = path.join(stateDir, 'waits');
  }

  /** Feed it the runs' progress: it keeps track of `route_wait` events and ignores the rest. */
  readonly onProgress = (event: ProgressEvent): void => {
    if (event.kind !== 'route_wait') return;
    const waits = this.#runs.get(event.run_id) ?? new Map<string, ShownWait>();
    if (event.wait) waits.set(event.persona, { ...event.wait, persona: event.persona });
    else waits.delete(event.persona);
    if (waits.size > 0) this.#runs.set(event.run_id, waits);
    else this.#runs.delete(event.run_id);
    this.#save(event.run_id);
  };

  /** The run has ended: nothing of it waits any more. */
  clear(runId: string): void {
    if (!this.#runs.delete(runId) && !this.#writes.has(runId)) return;
    this.#save(runId);
  }

  /** Resolves when every write started so far is done (tests, shutdown). */
  async flushed(): Promise<void> {
    await Promise.all([...this.#writes.values()]);
  }

  #save(runId: string): void {
    const file = path.join(this.#dir, `${runId}.json`);
    const before = this.#writes.get(runId) ?? Promise.resolve();
    const write = before.then(async () => {
      const waits = this.#runs.get(runId);
      if (!waits) return rm(file, { force: true });
      await ensurePrivateDir(this.#dir);
      await writeJsonAtomically(file, [...waits.values()]);
    });
    const settled = write.catch(() => undefined);
    this.#writes.set(runId, settled);
    void settled.then(() => {
      if (this.#writes.get(runId) === settled) this.#writes.delete(runId);
    });
  }
}

/** What `.maestro/waits/` says, by run id (unreadable files are left out). */
export async function readRouteWaits(stateDir: string): Promise<Map<string, ShownWait[]>> {
  const dir = path.join(stateDir, 'waits');
  const out = new Map<string, ShownWait[]>();
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const runId = RUN_FILE.exec(name)?.[1];
    if (!runId) continue;
    try {
      const waits = JSON.parse(await readFile(path.join(dir, name), 'utf8')) as unknown;
      if (Array.isArray(waits)) out.set(runId, waits.filter(isShownWait));
    } catch {
      // Being replaced, or half-written by a process that died: no line in status.
    }
  }
  return out;
}

function isShownWait(value: unknown): value is ShownWait {
  const w = value as Partial<ShownWait> | null;
  return typeof w?.route === 'string' && typeof w.limit === 'string' && typeof w.persona === 'string' && typeof w.since === 'string';
}
