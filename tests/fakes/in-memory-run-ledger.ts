import { LedgerRun } from '../../src/adapters/ledger-run.js';
import type { AuditEvent } from '../../src/domain/audit.js';
import { isSafeRunId } from '../../src/domain/audit-retention.js';
import { StorageError } from '../../src/domain/errors.js';
import type { Clock, OpenRun, RunFileName, RunLedger } from '../../src/domain/ports.js';
import type { ResolvedCommit } from '../../src/domain/run/commit.js';
import type { RunState } from '../../src/domain/run-state.js';

/** A record as the in-memory log keeps it: the event, its place in the log and when it was written. */
export type KeptRecord = AuditEvent & { readonly seq: number; readonly ts: string };

/** Decides whether a commit fails (and with what), as a full disk or a lost engine would make it. */
export type CommitFault = (commit: ResolvedCommit) => Error | undefined;

/**
 * The run ledger in memory, for use-case tests with no disk: every run's state, audit log and files.
 * A commit is all or nothing, as the engine's transaction is; `failWhen` makes commits fail. Records
 * are kept as the app made them (the real logs sanitize and chain them: adapters' tests cover that).
 */
export class InMemoryRunLedger implements RunLedger {
  readonly #states = new Map<string, RunState>();
  readonly #logs = new Map<string, KeptRecord[]>();
  readonly #files = new Map<string, Map<RunFileName, string>>();
  #fault: CommitFault | undefined;
  /** Every commit made durable, in order (to assert what went together). */
  readonly commits: ResolvedCommit[] = [];

  constructor(private readonly clock: Clock) {}

  async open(runId: string): Promise<OpenRun> {
    if (!isSafeRunId(runId)) throw new StorageError(`refusing to open run "${runId}": not a plain name`, 'memory:audit');
    return new MemoryRun(runId, this.#states.get(runId), this.clock, this);
  }

  async load(runId: string): Promise<RunState | undefined> {
    return this.#states.get(runId);
  }

  async list(): Promise<string[]> {
    return [...this.#states.keys()].sort();
  }

  async readFile(runId: string, name: RunFileName): Promise<string | undefined> {
    return this.#files.get(runId)?.get(name);
  }

  /** Commits from now on fail when `fault` says so (undefined: they go through again). */
  failWhen(fault: CommitFault | undefined): void {
    this.#fault = fault;
  }

  /** A run's records, in log order. */
  records(runId: string): KeptRecord[] {
    return [...(this.#logs.get(runId) ?? [])];
  }

  /** A run's record events, in log order. */
  events(runId: string): string[] {
    return this.records(runId).map((r) => r.event);
  }

  /** Puts a state in place as if an earlier process had left it (a checkpoint to resume, a crash to recover). */
  seed(state: RunState, records: readonly AuditEvent[] = []): void {
    this.#states.set(state.run_id, state);
    this.#append(state.run_id, records);
  }

  /** Replaces a run file behind the ledger's back, as a damaged disk or a person's editor can. */
  damageFile(runId: string, name: RunFileName, content: string): void {
    this.#files.get(runId)?.set(name, content);
  }

  /** @internal One resolved commit, whole or not at all. */
  write(commit: ResolvedCommit): void {
    const fault = this.#fault?.(commit);
    if (fault) throw fault;
    if (commit.changesState && commit.after) this.#states.set(commit.runId, commit.after);
    this.#append(commit.runId, commit.records);
    const files = this.#files.get(commit.runId) ?? new Map<RunFileName, string>();
    for (const file of commit.files) files.set(file.name, file.content);
    for (const name of commit.removeFiles) files.delete(name);
    this.#files.set(commit.runId, files);
    this.commits.push(commit);
  }

  #append(runId: string, records: readonly AuditEvent[]): void {
    const log = this.#logs.get(runId) ?? [];
    for (const record of records) log.push({ ...record, seq: log.length, ts: this.clock.now().toISOString() });
    this.#logs.set(runId, log);
  }
}

class MemoryRun extends LedgerRun {
  readonly log: string;

  constructor(
    runId: string,
    state: RunState | undefined,
    clock: Clock,
    private readonly ledger: InMemoryRunLedger,
  ) {
    super(runId, { state }, clock);
    this.log = `memory:audit/${runId}`;
  }

  hasRecorded(event: string): boolean {
    return this.ledger.events(this.runId).includes(event);
  }

  recordedSteps(): ReadonlySet<string> {
    const steps = this.ledger
      .records(this.runId)
      .filter((r) => r.event === 'MODEL_CALL')
      .map((r) => r.details?.step_id);
    return new Set(steps.filter((s): s is string => typeof s === 'string'));
  }

  filePath(name: RunFileName): string {
    return `memory:runs/${this.runId}/${name}`;
  }

  async close(): Promise<void> {
    // Every commit was whole: nothing is left open.
  }

  protected async write(commit: ResolvedCommit): Promise<void> {
    this.ledger.write(commit);
  }
}
