import { randomBytes } from 'node:crypto';
import { readdir, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ensurePrivateDir, writeJsonAtomically } from './atomic-file.js';
import { safeJson } from './read.js';
import {
  isRecordedProcessAlive,
  probeProcess,
  readProcessStart,
  type ProcessProbe,
  type ProcessStartReader,
} from '../system/process-identity.js';

export { probeProcess, type ProcessProbe } from '../system/process-identity.js';

/** Who owns a claim: a watcher process. `id` is unique per watcher run, so a reused pid is not mistaken for it. */
export const WatcherIdentity = z.strictObject({
  id: z.string().regex(/^[0-9]+-[0-9a-f]+$/),
  pid: z.number().int().positive(),
});
export type WatcherIdentity = z.infer<typeof WatcherIdentity>;

/** `.maestro/watchers/<pid>.json`: written when a watcher starts, removed when it stops. */
export const WatcherRecord = WatcherIdentity.extend({
  started_at: z.string(),
  once: z.boolean(),
  version: z.string(),
  /** A process that took over one run's claim (`run --resume`, the console) and takes no command from commands/. */
  resuming: z.string().optional(),
  /** When the watcher's process started (see process-identity.ts), so a pid handed out again is not it; absent in older files. */
  process_start: z.string().optional(),
});
export type WatcherRecord = z.infer<typeof WatcherRecord>;

export interface WatcherListing extends WatcherRecord {
  /** False when the process is gone: a stale pid file left by a crash. */
  readonly alive: boolean;
}

/**
 * The pid files of the watchers in one workspace, with stale-pid detection. A watcher counts as
 * alive only if its pid file names it (same id) and its process exists and started when the file
 * says, so neither a crash (stale file) nor a reused pid makes a dead watcher look alive.
 */
export class FsWatcherRegistry {
  constructor(
    private readonly dir: string,
    private readonly probe: ProcessProbe = probeProcess,
    private readonly readStart: ProcessStartReader = readProcessStart,
  ) {}

  static newIdentity(pid: number = process.pid): WatcherIdentity {
    return { id: `${pid}-${randomBytes(4).toString('hex')}`, pid };
  }

  fileFor(pid: number): string {
    return path.join(this.dir, `${pid}.json`);
  }

  /** Writes the watcher's pid file, with when its process started (read here unless given). */
  async register(record: WatcherRecord): Promise<void> {
    await ensurePrivateDir(this.dir);
    const processStart = record.process_start ?? this.readStart(record.pid);
    const withStart = processStart === undefined ? record : { ...record, process_start: processStart };
    await writeJsonAtomically(this.fileFor(record.pid), withStart, { mode: 0o600 });
  }

  /** Removes this watcher's pid file, only if it is still this watcher's. */
  async unregister(identity: WatcherIdentity): Promise<void> {
    const current = await this.read(identity.pid);
    if (current?.id !== identity.id) return;
    await unlink(this.fileFor(identity.pid)).catch(ignoreMissing);
  }

  async list(): Promise<WatcherListing[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const out: WatcherListing[] = [];
    for (const name of names.filter((n) => /^[0-9]+\.json$/.test(n)).sort()) {
      const record = await this.read(Number(name.slice(0, -5)));
      if (record) out.push({ ...record, alive: this.#alive(record) });
    }
    return out.sort((a, b) => a.started_at.localeCompare(b.started_at) || a.pid - b.pid);
  }

  /** Deletes the pid files of watchers that are gone; returns their pids. */
  async removeStale(): Promise<number[]> {
    const stale = (await this.list()).filter((w) => !w.alive);
    for (const w of stale) await unlink(this.fileFor(w.pid)).catch(ignoreMissing);
    return stale.map((w) => w.pid);
  }

  async isAlive(owner: WatcherIdentity): Promise<boolean> {
    const record = await this.read(owner.pid);
    return record?.id === owner.id && this.#alive(record);
  }

  #alive(record: WatcherRecord): boolean {
    return isRecordedProcessAlive(record, this.probe, this.readStart);
  }

  private async read(pid: number): Promise<WatcherRecord | undefined> {
    let text: string;
    try {
      text = await readFile(this.fileFor(pid), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    // Pid files are written atomically, so one that does not parse was edited by hand: it names no watcher.
    const parsed = WatcherRecord.safeParse(safeJson(text));
    return parsed.success ? parsed.data : undefined;
  }
}

export function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
}
