import { hostname } from 'node:os';
import { unlink } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { InvalidInputError, RunHeldError } from '../../domain/errors.js';
import type { Clock, RunHold, RunHolds } from '../../domain/ports.js';
import { ensurePrivateDir, writeFileAtomically } from './atomic-file.js';
import { readIfExists, safeJson } from './read.js';
import {
  isRecordedProcessAlive,
  probeProcess,
  readProcessStart,
  type ProcessProbe,
  type ProcessStartReader,
} from '../system/process-identity.js';
import { systemClock } from '../system/system-clock.js';
import { ignoreMissing } from './watcher-registry.js';
import type { WorkspacePaths } from './workspace-paths.js';

/** `.maestro/holders/<run_id>.json`: the process executing the run, written once as it starts, removed as it stops. */
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
}

export interface FsRunHoldsOptions {
  /** When a hold started (default: the system clock). */
  readonly clock?: Clock;
  /** This process (tests: another one). */
  readonly pid?: number;
  readonly host?: string;
  readonly probe?: ProcessProbe;
  readonly readStart?: ProcessStartReader;
}

const SAFE_RUN_ID = /^[A-Za-z0-9_-]+$/;

/** Runs held by this process, whatever the instance: the one thing a pid cannot say about its own process. */
const heldHere = new Set<string>();

/**
 * Who executes a run now, for a workspace on files: one small file per run being executed, written
 * once when the run starts or resumes (never per step) and removed when this process lets it go.
 * It is crash-safe by construction: a killed process leaves its file behind, and the file then names
 * a process that is gone (or a pid handed to a later process, told apart by its start time), which
 * reads as not held. A process on another machine cannot be checked, and counts as alive.
 */
export class FsRunHolds implements RunHolds {
  readonly #dir: string;
  readonly #clock: Clock;
  readonly #pid: number;
  readonly #host: string;
  readonly #probe: ProcessProbe;
  readonly #readStart: ProcessStartReader;

  constructor(paths: WorkspacePaths, options: FsRunHoldsOptions = {}) {
    this.#dir = path.join(paths.state, 'holders');
    this.#clock = options.clock ?? systemClock;
    this.#pid = options.pid ?? process.pid;
    this.#host = options.host ?? hostname();
    this.#probe = options.probe ?? probeProcess;
    this.#readStart = options.readStart ?? readProcessStart;
  }

  async hold(runId: string): Promise<RunHold> {
    const file = this.#fileFor(runId);
    if (file === undefined) throw new InvalidInputError('run id', [`(root): "${runId}" is not a run id (letters, digits, - and _ only)`]);
    const current = await this.holderOf(runId);
    if (current?.alive) throw new RunHeldError(runId, current);
    const processStart = this.#readStart(this.#pid);
    const record: HolderRecord = {
      run_id: runId,
      pid: this.#pid,
      ...(processStart ? { process_start: processStart } : {}),
      host: this.#host,
      since: this.#clock.now().toISOString(),
    };
    await ensurePrivateDir(this.#dir);
    // Whole for readers, not flushed: the file matters only while this process lives (a crash that
    // loses it leaves the run as a killed process leaves it: not held).
    await writeFileAtomically(file, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600, durable: false });
    const key = this.#key(runId);
    heldHere.add(key);
    return {
      release: async () => {
        heldHere.delete(key);
        // Only our own record goes: one another process wrote since (after taking the run over) stays.
        const now = await this.#read(runId);
        if (now?.pid === record.pid && now.host === record.host && now.since === record.since) await unlink(file).catch(ignoreMissing);
      },
    };
  }

  /** The process that holds the run, if any file names one: `alive` says whether it still runs it. */
  async holderOf(runId: string): Promise<RunHolder | undefined> {
    const record = await this.#read(runId);
    return record && { pid: record.pid, since: record.since, alive: this.#isAlive(record) };
  }

  #isAlive(record: HolderRecord): boolean {
    if (record.host !== this.#host) return true;
    // This process knows which runs it holds; its own pid in a file it did not write is a stale one.
    if (record.pid === this.#pid) return heldHere.has(this.#key(record.run_id));
    return isRecordedProcessAlive(record, this.#probe, this.#readStart);
  }

  async #read(runId: string): Promise<HolderRecord | undefined> {
    const file = this.#fileFor(runId);
    const text = file === undefined ? undefined : await readIfExists(file);
    if (text === undefined) return undefined;
    // Written whole (atomically), so a file that does not parse was edited by hand: it names no process.
    const parsed = HolderRecord.safeParse(safeJson(text));
    return parsed.success && parsed.data.run_id === runId ? parsed.data : undefined;
  }

  /** Undefined for a name that is not a run id: nothing outside the folder is ever read or written. */
  #fileFor(runId: string): string | undefined {
    return SAFE_RUN_ID.test(runId) ? path.join(this.#dir, `${runId}.json`) : undefined;
  }

  #key(runId: string): string {
    return `${this.#dir}\u0000${runId}`;
  }
}
