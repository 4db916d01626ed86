import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { parseRunState } from '../../domain/checkpoint.js';
import type { RunEvent } from '../../domain/run-machine.js';
import type { RunState } from '../../domain/run-state.js';
import { RAW_COMMAND_FILE, screenRunState } from '../../domain/screen.js';
import { isLiveRun } from '../../domain/run/transitions.js';
import { StorageError } from '../../domain/errors.js';
import {
  ensurePrivateDir,
  flushData,
  realFs,
  syncDirectory,
  writeFileAtomically,
  writeFully,
  storageError,
  type DurableFs,
  type DurableHandle,
} from './atomic-file.js';
import type { AuditAhead } from './audit-sink.js';
import { settleAuditFromJournal } from './audit-recovery.js';
import { flushAuditFiles, writeAuditAhead } from './audit-wal.js';
import { readIfExists } from './read.js';
import { loadRunState } from './run-catalog.js';
import { sha256 } from '../system/hashing.js';
import { baseLine, eventLine, JOURNAL_FILE, journalRemovals, readCheckpoint } from './run-journal.js';
import type { WorkspacePaths } from './workspace-paths.js';

/**
 * One change of a run's checkpoint as the store makes it durable: an event applied to `before`, or a
 * whole state (the run's first, or a state from elsewhere) when there is no event.
 */
export interface RunChange {
  readonly before?: RunState;
  readonly event?: RunEvent;
  readonly at: string;
  readonly after: RunState;
  /** Run files the change removes (plain names in the run's folder): once the change is durable, and again when the journal is folded. */
  readonly removeFiles?: readonly string[];
  /** Run files written whole before the change's line (a crash before the line leaves files no state names yet). */
  readonly files?: readonly { readonly name: string; readonly content: string }[];
}

/** A journal this process appends to: its handle, its length, and the state its lines describe. */
interface OpenJournal {
  readonly handle: DurableHandle;
  readonly file: string;
  /** Bytes known to be whole lines; a failed append is cut back to this. */
  size: number;
  /** The state the journal describes now (the object last recorded, compared by identity). */
  last: RunState;
  /** Audit records were written ahead through this journal: their log and head are flushed before it is folded. */
  wroteAhead: boolean;
  /** A write of records to their log or head failed after the journal took them: the log is mended from the journal before it is folded. */
  auditBehind: boolean;
  /** The run's audit log, held open (to append) while records are written ahead. */
  auditLog?: DurableHandle;
  /** Run files its lines removed: removed again when it is folded (a removal that failed is not lost). */
  readonly removed: Set<string>;
}

export interface FsRunStoreOptions {
  /** A journal longer than this is folded into `state.json` and started afresh (default 8 MiB). */
  readonly compactBytes?: number;
  /** The calls that append to the journal and fold it into `state.json` (tests inject short writes, ENOSPC and failures). */
  readonly fs?: DurableFs;
}

/**
 * `.maestro/runs/<run_id>/`: the checkpoint, the part of the files' run ledger (FsRunLedger) that
 * keeps a run's state and its files. While a run is executed, every change is one line
 * appended to `journal.jsonl` and flushed (see run-journal.ts); when the run pauses or ends, or the
 * process lets it go (`close`), the journal is folded into `state.json` (written atomically) and
 * removed. Reading prefers the journal when there is one, so a crash at any point loses nothing that
 * was acknowledged and repeats nothing: a cut last line is ignored, a damaged one refused.
 */
export class FsRunStore {
  readonly #open = new Map<string, OpenJournal>();
  readonly #compactBytes: number;
  readonly #fs: DurableFs;

  constructor(
    private readonly paths: WorkspacePaths,
    options: FsRunStoreOptions = {},
  ) {
    this.#compactBytes = options.compactBytes ?? 8 * 1024 * 1024;
    this.#fs = options.fs ?? realFs;
  }

  /**
   * One change and the audit records written with it: one journal line holding both, one fdatasync;
   * then the records are appended to their log and the head rewritten, unflushed (the journal is
   * their write-ahead log: see audit-wal.ts); then the files the change removes are removed.
   */
  async recordAhead(change: RunChange, audit?: AuditAhead): Promise<void> {
    const runId = change.after.run_id;
    if (audit && audit.log !== this.paths.auditLog(runId))
      throw new StorageError(`audit records of run ${runId} were handed over for another log (${audit.log})`, audit.log);
    // The files written before the change's line, each whole and durable (its folder synced) before the line is the commit point.
    for (const file of change.files ?? []) await this.saveFile(runId, file.name, file.content);
    const open = await this.#appendChange(change, audit?.lines);
    for (const name of change.removeFiles ?? []) open.removed.add(name);
    if (audit && audit.lines.length > 0) {
      open.wroteAhead = true;
      open.auditBehind = true; // until the lines and the head are written
      open.auditLog ??= await this.#openAuditLog(runId);
      await writeAuditAhead(this.#fs, runId, { log: open.auditLog, headFile: this.paths.auditHead(runId) }, audit);
      open.auditBehind = false;
    }
    await this.#removeFiles(runId, change.removeFiles ?? []);
    if (change.after.status !== 'running' || open.size > this.#compactBytes) await this.#compact(runId, change.after);
  }

  /** The change as journal lines (its records, when given, in the same line), appended and flushed. */
  async #appendChange(change: RunChange, audit: readonly string[] | undefined): Promise<OpenJournal> {
    const runId = change.after.run_id;
    let open = this.#open.get(runId);
    if (!change.event) {
      if (!open) return this.#start(change.after, audit);
      await this.#append(open, baseLine(change.after, audit));
      open.last = change.after;
      return open;
    }
    const before = change.before;
    if (!before) throw new StorageError(`an event of run ${runId} came without the state it applies to`, this.paths.runDir(runId));
    if (!open) open = await this.#start(before);
    else if (open.last !== before) {
      // Someone else's copy of the state: the journal goes on from it, whole.
      await this.#append(open, baseLine(before));
      open.last = before;
    }
    await this.#append(open, eventLine(change.at, change.event, audit, change.removeFiles));
    open.last = change.after;
    return open;
  }

  /**
   * This process no longer executes the run: its journal is folded into `state.json` (best effort). So
   * is an ended run's journal that a process killed before the fold left: nothing writes to it again.
   */
  async close(runId: string): Promise<void> {
    const open = this.#open.get(runId);
    if (open) return this.#compact(runId, open.last).catch(() => undefined);
    const read = await readCheckpoint(this.paths.runDir(runId)).catch(() => undefined);
    const ended = read?.file.endsWith(JOURNAL_FILE) ? parseRunState(read.json) : undefined;
    if (ended?.ok && !isLiveRun(ended.value)) await this.#compact(runId, ended.value).catch(() => undefined);
  }

  load(runId: string): Promise<RunState | undefined> {
    return loadRunState(this.paths, runId);
  }

  /** Saves a side file next to the checkpoint (the command copy, a pause record, a draft). */
  async saveFile(runId: string, name: string, content: string): Promise<string> {
    await ensurePrivateDir(this.paths.runDir(runId));
    const file = path.join(this.paths.runDir(runId), name);
    await writeFileAtomically(file, content, { mode: 0o600, fs: this.#fs });
    return file;
  }

  async removeFile(runId: string, name: string): Promise<void> {
    await this.#removeFiles(runId, [name]);
  }

  /** Removes run files by plain name (a name from a journal is never followed out of the run's folder). */
  async #removeFiles(runId: string, names: readonly string[]): Promise<void> {
    for (const name of names) {
      if (path.basename(name) !== name || name.startsWith('.')) {
        throw new StorageError(`refusing to remove "${name}" for run ${runId}: not a run file`, this.paths.runDir(runId));
      }
      const file = path.join(this.paths.runDir(runId), name);
      try {
        await rm(file, { force: true });
      } catch (error) {
        throw storageError(`could not remove ${file}`, file, error);
      }
    }
  }

  /** Every run id with a folder, sorted (ids sort by time). */
  async list(): Promise<string[]> {
    try {
      return (await readdir(this.paths.runs, { withFileTypes: true }))
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }

  /**
   * Starts this process's journal of a run with a whole state. A journal left by another process (a
   * crash) is folded into `state.json` first, so this one never appends after a line it did not write.
   */
  async #start(state: RunState, audit?: readonly string[]): Promise<OpenJournal> {
    const dir = this.paths.runDir(state.run_id);
    const file = path.join(dir, JOURNAL_FILE);
    if ((await readIfExists(file)) !== undefined) await this.#compact(state.run_id, state);
    await ensurePrivateDir(dir);
    let handle: DurableHandle | undefined;
    try {
      handle = await this.#fs.open(file, 'wx', 0o600);
      const open: OpenJournal = {
        handle,
        file,
        size: 0,
        last: state,
        wroteAhead: false,
        auditBehind: false,
        removed: new Set(),
      };
      await this.#append(open, baseLine(state, audit));
      // The journal's name must survive a crash as well as its lines.
      await syncDirectory(dir, this.#fs);
      this.#open.set(state.run_id, open);
      return open;
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await this.#fs.unlink(file).catch(() => undefined);
      throw storageError(`could not start the checkpoint journal ${file}`, file, error);
    }
  }

  /**
   * Appends whole lines and flushes them; a failure cuts the file back to its last whole line, so the
   * next append starts clean.
   */
  async #append(open: OpenJournal, text: string): Promise<void> {
    const data = Buffer.from(text, 'utf8');
    const { handle } = open;
    try {
      await writeFully(handle, data, open.size);
      await flushData(handle);
      open.size += data.length;
    } catch (error) {
      // The next append writes at `size` all the same, over whatever is there.
      await handle.truncate?.(open.size).catch(() => undefined);
      throw storageError(`could not append to the checkpoint journal ${open.file}`, open.file, error);
    }
  }

  /** The run's audit log, held open to append while the journal is. */
  async #openAuditLog(runId: string): Promise<DurableHandle> {
    const file = this.paths.auditLog(runId);
    try {
      return await this.#fs.open(file, 'a', 0o600);
    } catch (error) {
      throw storageError(`could not open the audit log ${file}`, file, error);
    }
  }

  /**
   * Folds a run's checkpoint into `state.json`: the audit records it wrote ahead made durable in
   * their log, the state written atomically, the run files its changes removed removed (again), then
   * the journal removed, then one folder fsync for all. A crash before the journal's removal leaves a
   * journal that reads as the same state, or as the one before it when this state was never acknowledged.
   */
  async #compact(runId: string, state: RunState): Promise<void> {
    const dir = this.paths.runDir(runId);
    const file = path.join(dir, JOURNAL_FILE);
    const open = this.#open.get(runId);
    // The records the journal carries must be in their log, and on disk, before it goes; if they
    // cannot be put there, the journal stays (it still holds them) and this throws.
    const text = !open || open.auditBehind ? await readIfExists(file) : undefined;
    if (!open || open.auditBehind) {
      const [logFile, headFile] = [this.paths.auditLog(runId), this.paths.auditHead(runId)];
      await settleAuditFromJournal({ runId, file: logFile, headFile, journalFile: file, journal: text, fs: this.#fs, sha256 });
    } else if (open.wroteAhead) await flushAuditFiles(this.#fs, [this.paths.auditLog(runId), this.paths.auditHead(runId)]);
    this.#open.delete(runId);
    await open?.handle.close().catch(() => undefined);
    await open?.auditLog?.close().catch(() => undefined);
    await ensurePrivateDir(dir);
    const kept = `${JSON.stringify(screenRunState(state), null, 2)}\n`;
    await writeFileAtomically(path.join(dir, 'state.json'), kept, { mode: 0o600, fs: this.#fs, syncDir: false });
    await this.#removeFiles(runId, [...new Set([...(open?.removed ?? []), ...(text === undefined ? [] : journalRemovals(text))])]);
    await this.#unlinkIfThere(file, 'the checkpoint journal');
    // A run that has ended keeps nothing raw: the command as given goes with its end, however it ended.
    if (!isLiveRun(state)) await this.#unlinkIfThere(path.join(dir, RAW_COMMAND_FILE), 'the command copy');
    await syncDirectory(dir, this.#fs);
  }

  async #unlinkIfThere(file: string, what: string): Promise<void> {
    try {
      await this.#fs.unlink(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw storageError(`could not remove ${what} ${file}`, file, error);
    }
  }
}
