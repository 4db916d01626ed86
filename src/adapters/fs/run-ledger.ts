import path from 'node:path';
import { isSafeRunId } from '../../domain/audit-retention.js';
import type { Clock, OpenRun, RunFileName, RunLedger } from '../../domain/ports.js';
import { RUN_FILES } from '../../domain/ports.js';
import type { ResolvedCommit } from '../../domain/run/commit.js';
import type { RunState } from '../../domain/run-state.js';
import type { AuditLog, AuditSink } from './audit-sink.js';
import type { FsRunStore, RunChange } from './run-store.js';
import { readIfExists } from './read.js';
import { LedgerRun, type LoadedState } from '../ledger-run.js';
import type { WorkspacePaths } from './workspace-paths.js';

export interface FsRunLedgerOptions {
  readonly paths: WorkspacePaths;
  /** The checkpoints: `.maestro/runs/<run_id>/` (the journal while a run is executed, then `state.json`). */
  readonly store: FsRunStore;
  /** The audit logs: `.maestro/audit/<run_id>.jsonl` (possibly wrapped, to feed traces). */
  readonly audit: AuditLog;
  readonly clock: Clock;
}

/**
 * The run ledger on files: a run's checkpoint (`FsRunStore`), its audit log (`JsonlAuditLog`) and its
 * files (`command.json`, `hitl.json`, `draft.md`), changed by commits in one write order:
 *
 * 1. the commit's files, each written whole (temporary file, fsync, rename, folder fsync);
 * 2. the change and its audit records in ONE journal line, flushed — the commit point (the journal
 *    is the audit log's write-ahead log: the records then reach the log and its head unflushed, are
 *    flushed before the journal is folded, and are taken from the journal by whoever opens the log
 *    after a crash);
 * 3. the files the commit removes, named in that line, so a fold of the journal removes them again.
 *
 * A crash before 2 leaves files no state names yet (the resumed run writes them again); after it,
 * the change and its records are durable together, and at most a file the state no longer needs is
 * left until the fold. A commit without a change of state appends its records, each flushed.
 */
export class FsRunLedger implements RunLedger {
  constructor(private readonly o: FsRunLedgerOptions) {}

  async open(runId: string): Promise<OpenRun> {
    // The log first: opening it refuses an unsafe run id, and restores the records a crash left in the journal.
    const sink = await this.o.audit.open(runId);
    let loaded: LoadedState;
    try {
      loaded = { state: await this.o.store.load(runId) };
    } catch (error) {
      loaded = { unreadable: error as Error };
    }
    return new FsOpenRun(runId, loaded, { ...this.o, sink });
  }

  async load(runId: string): Promise<RunState | undefined> {
    return isSafeRunId(runId) ? this.o.store.load(runId) : undefined;
  }

  list(): Promise<string[]> {
    return this.o.store.list();
  }

  async readFile(runId: string, name: RunFileName): Promise<string | undefined> {
    if (!isSafeRunId(runId) || !RUN_FILES.includes(name)) return undefined;
    return readIfExists(path.join(this.o.paths.runDir(runId), name));
  }
}

class FsOpenRun extends LedgerRun {
  constructor(
    runId: string,
    loaded: LoadedState,
    private readonly o: FsRunLedgerOptions & { readonly sink: AuditSink },
  ) {
    super(runId, loaded, o.clock);
  }

  get log(): string {
    return this.o.sink.path;
  }

  hasRecorded(event: string): boolean {
    return this.o.sink.hasRecorded?.(event) ?? false;
  }

  recordedSteps(): ReadonlySet<string> {
    return this.o.sink.recordedSteps?.() ?? new Set();
  }

  filePath(name: RunFileName): string {
    return path.join(this.o.paths.runDir(this.runId), name);
  }

  close(): Promise<void> {
    return this.o.store.close(this.runId);
  }

  protected async write(commit: ResolvedCommit): Promise<void> {
    const { store, sink } = this.o;
    if (!commit.changesState || !commit.after) {
      for (const file of commit.files) await store.saveFile(this.runId, file.name, file.content);
      for (const record of commit.records) await sink.append(record);
      for (const name of commit.removeFiles) await store.removeFile(this.runId, name);
      return;
    }
    // The files go with the change: the store writes them before its line (and, when the line starts
    // the run's journal, has one folder sync cover them and the journal).
    const change: RunChange = {
      ...(commit.before && commit.event ? { before: commit.before, event: commit.event } : {}),
      at: commit.at,
      after: commit.after,
      removeFiles: commit.removeFiles,
      files: commit.files,
    };
    if (commit.records.length === 0) return store.recordAhead(change);
    if (sink.appendAhead) return sink.appendAhead(commit.records, (ahead) => store.recordAhead(change, ahead));
    // A log that cannot take records written ahead: the change first, so the log never names a step the checkpoint lacks.
    await store.recordAhead(change);
    for (const record of commit.records) await sink.append(record);
  }
}
