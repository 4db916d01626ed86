import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { readdir, rename, rm, rmdir, unlink, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { z } from 'zod';
import { InvalidInputError, RunHeldError, StorageError } from '../../domain/errors.js';
import type { Clock, HoldSpan, RunHold, RunHolds } from '../../domain/ports.js';
import { ensurePrivateDir } from './atomic-file.js';
import { readIfExists, safeJson } from './read.js';
import { isRecordedProcessAlive, probeProcess, readProcessStart, type ProcessStartReader } from '../system/process-identity.js';
import { systemClock } from '../system/system-clock.js';
import { ignoreMissing } from './watcher-registry.js';
import type { WorkspacePaths } from './workspace-paths.js';

/**
 * `.maestro/holders/<run_id>/<holder>.json`: the process holding the run, written once as it takes it,
 * removed as it lets go. A hold for the whole run is named `<holder>.run.json` (its span is in the name,
 * not the record, so a maestro of the version before, whose strict reader knows no span, still reads it).
 */
export const HolderRecord = z.strictObject({
  run_id: z.string(),
  pid: z.number().int().positive(),
  /** See process-identity.ts: tells this process from a later one given the same pid. */
  process_start: z.string().optional(),
  /** A pid means nothing on another machine sharing the folder. */
  host: z.string(),
  since: z.string(),
});
export type HolderRecord = z.infer<typeof HolderRecord>;

/** The process holding a run, as a reader sees it. */
export interface RunHolder {
  readonly pid: number;
  readonly since: string;
  readonly alive: boolean;
  readonly span?: HoldSpan;
}

export interface FsRunHoldsOptions {
  /** When a hold started (default: the system clock). */
  readonly clock?: Clock;
  /** This process (tests: another one). */
  readonly pid?: number;
  readonly host?: string;
  readonly readStart?: ProcessStartReader;
}

const SAFE_RUN_ID = /^[A-Za-z0-9_-]+$/;

/** The prefix of a hold's folder while its record is written, before it is renamed to the run's. */
const STAGED = '.new-';

/** The records of the holds of this process, whatever the instance: the one thing a pid cannot say about its own process. */
const heldHere = new Set<string>();

/**
 * Who holds a run now, for a workspace on files: the one process that executes it, resumes it or
 * decides its pause. A hold is a folder, `.maestro/holders/<run_id>/`, holding one record named for
 * its holder, written once (never per step) and removed when this process lets the run go.
 *
 * Exclusive without a lock to refresh: a record is written whole in a folder of its own, which is
 * then renamed to the run's folder. The rename succeeds only while that folder is absent or empty,
 * so of two processes exactly one holds the run. Crash-safe by construction: a killed process leaves
 * its record behind, naming a process that is gone (or a pid handed to a later process, told apart
 * by its start time); the next one removes that record by its own name (never a record written
 * since) and renames its own in. A process on another machine cannot be checked, and counts as alive.
 */
export class FsRunHolds implements RunHolds {
  readonly #dir: string;
  readonly #clock: Clock;
  readonly #pid: number;
  readonly #host: string;
  readonly #readStart: ProcessStartReader;
  #swept: Promise<void> | undefined;

  constructor(paths: WorkspacePaths, options: FsRunHoldsOptions = {}) {
    this.#dir = path.join(paths.state, 'holders');
    this.#clock = options.clock ?? systemClock;
    this.#pid = options.pid ?? process.pid;
    this.#host = options.host ?? hostname();
    this.#readStart = options.readStart ?? readProcessStart;
  }

  async hold(runId: string, options: { readonly waitMs?: number; readonly span?: HoldSpan } = {}): Promise<RunHold> {
    const folder = this.#folderFor(runId);
    if (folder === undefined) throw new InvalidInputError('run id', [`(root): "${runId}" is not a run id (letters, digits, - and _ only)`]);
    this.#swept ??= this.#sweepStaged();
    await this.#swept;
    const name = `${this.#pid}-${randomUUID().slice(0, 8)}${options.span === 'run' ? RUN_SPAN : ''}`;
    const staged = path.join(this.#dir, `${STAGED}${name}`);
    const processStart = this.#readStart(this.#pid);
    const record: HolderRecord = {
      run_id: runId,
      pid: this.#pid,
      ...(processStart ? { process_start: processStart } : {}),
      host: this.#host,
      since: this.#clock.now().toISOString(),
    };
    await ensurePrivateDir(staged);
    const mine = path.join(folder, `${name}.json`);
    // Counted as this process's before it is visible: a reader in this process never sees it as left behind.
    heldHere.add(mine);
    let holder: RunHolder | undefined;
    try {
      // Whole before anyone can see it, not flushed: a record matters only while this process lives.
      await writeFile(path.join(staged, `${name}.json`), `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
      const deadline = Date.now() + (options.waitMs ?? 0);
      while ((holder = await this.#take(folder, staged)) !== undefined) {
        // Two processes that would both run it: the run's hold lasts as long as the run, so waiting only delays the refusal.
        if (Date.now() >= deadline || (holder.span === 'run' && options.span === 'run')) throw new RunHeldError(runId, holder);
        await sleep(50);
      }
    } catch (error) {
      heldHere.delete(mine);
      throw error;
    } finally {
      await rm(staged, { recursive: true, force: true }).catch(() => undefined);
    }
    return {
      release: async () => {
        heldHere.delete(mine);
        await unlink(mine).catch(ignoreMissing);
        // Only an empty folder goes: one another process renamed in since is its hold.
        await rmdir(folder).catch(() => undefined);
      },
    };
  }

  /**
   * Removes the staged folders (`.new-<pid>-<id>/`) of processes of this machine killed while taking a
   * hold, once a process: a folder whose record, or whose name when the record was not written yet,
   * names a process that is gone. A staged folder of a live process, or of another machine, is left.
   */
  async #sweepStaged(): Promise<void> {
    const names = await readdir(this.#dir).catch(() => [] as string[]);
    for (const entry of names) {
      const name = entry.startsWith(STAGED) ? entry.slice(STAGED.length) : undefined;
      const pid = Number(name?.split('-')[0]);
      if (name === undefined || !Number.isSafeInteger(pid) || pid <= 0 || pid === this.#pid) continue;
      const text = await readIfExists(path.join(this.#dir, entry, `${name}.json`)).catch(() => undefined);
      const parsed = text === undefined ? undefined : HolderRecord.safeParse(safeJson(text));
      const record = parsed?.success ? parsed.data : undefined;
      const gone = record
        ? record.host === this.#host && !isRecordedProcessAlive(record, probeProcess, this.#readStart)
        : !probeProcess(pid);
      if (gone) await rm(path.join(this.#dir, entry), { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /** The process that holds the run, if a record names one: `alive` says whether it still does. */
  async holderOf(runId: string): Promise<RunHolder | undefined> {
    const folder = this.#folderFor(runId);
    const records = folder === undefined ? [] : await this.#records(folder, runId);
    const held = records.find((r) => r.alive) ?? records.find((r) => r.record);
    return held?.record && holderFrom(held.record, held.alive, held.file);
  }

  /** Renames the staged record in: undefined once it is there, else the live holder it found. */
  async #take(folder: string, staged: string): Promise<RunHolder | undefined> {
    for (;;) {
      // A run an earlier maestro's live process holds (see `#records`) is not taken from it.
      const legacy = await this.#judge(`${folder}.json`, path.basename(folder));
      if (legacy.alive && legacy.record) return holderFrom(legacy.record, true, legacy.file);
      try {
        await rename(staged, folder);
        return undefined;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') {
          throw new StorageError(`could not hold ${folder}: ${(error as Error).message}`, folder, {
            cause: error,
            ...(code ? { errno: code } : {}),
          });
        }
      }
      const records = await this.#records(folder, path.basename(folder));
      const live = records.find((r) => r.alive);
      if (live?.record) return holderFrom(live.record, true, live.file);
      // Left by processes that are gone (or edited by hand): each removed by its own name.
      for (const r of records) await unlink(r.file).catch(ignoreMissing);
    }
  }

  /**
   * The records in a run's folder, each judged; a record that does not read names no process. With
   * them the file an earlier maestro held the run with (`holders/<run_id>.json`): a watcher of that
   * version still running beside this one holds its runs so.
   */
  async #records(folder: string, runId: string): Promise<{ file: string; record?: HolderRecord; alive: boolean }[]> {
    const names = await readdir(folder).catch((error: unknown) => {
      ignoreMissing(error);
      return [] as string[];
    });
    const records = [];
    for (const name of names) records.push(await this.#judge(path.join(folder, name), runId));
    const legacy = await this.#judge(`${folder}.json`, runId);
    return legacy.record ? [...records, legacy] : records;
  }

  /** One record, judged: whether it names a process that is alive. */
  async #judge(file: string, runId: string): Promise<{ file: string; record?: HolderRecord; alive: boolean }> {
    const text = await readIfExists(file).catch(() => undefined);
    // Written whole (renamed in), so a file that does not parse was edited by hand.
    const parsed = text === undefined ? undefined : HolderRecord.safeParse(safeJson(text));
    const record = parsed?.success && parsed.data.run_id === runId ? parsed.data : undefined;
    return { file, ...(record ? { record } : {}), alive: record !== undefined && this.#isAlive(record, file) };
  }

  #isAlive(record: HolderRecord, file: string): boolean {
    if (record.host !== this.#host) return true;
    // This process knows which holds are its own; its own pid in a record it did not write is a stale one.
    if (record.pid === this.#pid) return heldHere.has(file);
    return isRecordedProcessAlive(record, probeProcess, this.#readStart);
  }

  /** Undefined for a name that is not a run id: nothing outside the folder is ever read or written. */
  #folderFor(runId: string): string | undefined {
    return SAFE_RUN_ID.test(runId) ? path.join(this.#dir, runId) : undefined;
  }
}

/** What ends the name of a hold for the whole run (before `.json`). */
const RUN_SPAN = '.run';

function holderFrom(record: HolderRecord, alive: boolean, file: string): RunHolder {
  const span: HoldSpan = path.basename(file, '.json').endsWith(RUN_SPAN) ? 'run' : 'moment';
  return { pid: record.pid, since: record.since, alive, span };
}
