import type { Sha256 } from '../../domain/audit-chain.js';
import { isSafeRunId } from '../../domain/audit-retention.js';
import { cachedScanner, defaultSensitiveScanner, type SensitiveScanner } from '../../domain/audit-sanitizer.js';
import type { Clock, OpenRun, RunFileName, RunLedger } from '../../domain/ports.js';
import { RUN_FILES } from '../../domain/ports.js';
import type { ResolvedCommit } from '../../domain/run/commit.js';
import type { RunState } from '../../domain/run-state.js';
import { sha256 as nodeSha256 } from '../system/hashing.js';
import { LedgerRun, type LoadedState } from '../ledger-run.js';
import { composePgRecords, insertPgRecords, readPgChain, type PgChain } from './audit-log.js';
import type { Fence, PgEngine } from './engine.js';
import { PgRunStore, writeRunFiles, writeRunState } from './run-store.js';

export interface PgRunLedgerOptions {
  readonly engine: PgEngine;
  readonly clock: Clock;
  /** A worker's hold on the run: every commit is the claim holder's, or nothing of it is kept. */
  readonly fence?: Fence;
  readonly sha256?: Sha256;
  readonly scanner?: SensitiveScanner;
}

/** The options with their defaults filled in. */
type Settled = Required<Omit<PgRunLedgerOptions, 'fence'>> & { readonly fence?: Fence };

/**
 * The run ledger in PostgreSQL: a commit — the run's state (and with it its queue row), its audit
 * records (rows chained after the log's end, and the head) and its files — is ONE transaction,
 * fenced to the claim when there is one. Nothing of a commit is kept unless all of it is.
 */
export class PgRunLedger implements RunLedger {
  readonly #runs: PgRunStore;
  readonly #o: Settled;

  constructor(options: PgRunLedgerOptions) {
    this.#o = { ...options, sha256: options.sha256 ?? nodeSha256, scanner: options.scanner ?? cachedScanner(defaultSensitiveScanner) };
    this.#runs = new PgRunStore(options.engine, options.fence);
  }

  async open(runId: string): Promise<OpenRun> {
    const { engine, fence, sha256, scanner } = this.#o;
    const chain = await readPgChain(engine, runId, { sha256, scanner, ...(fence ? { fence } : {}) });
    let loaded: LoadedState;
    try {
      loaded = { state: await this.#runs.load(runId) };
    } catch (error) {
      loaded = { unreadable: error as Error };
    }
    return new PgOpenRun(runId, loaded, chain, this.#o);
  }

  async load(runId: string): Promise<RunState | undefined> {
    return isSafeRunId(runId) ? this.#runs.load(runId) : undefined;
  }

  list(): Promise<string[]> {
    return this.#runs.list();
  }

  async readFile(runId: string, name: RunFileName): Promise<string | undefined> {
    return RUN_FILES.includes(name) ? this.#runs.loadFile(runId, name) : undefined;
  }
}

class PgOpenRun extends LedgerRun {
  readonly log: string;
  #chain: Pick<PgChain, 'seq' | 'prevHash'>;
  readonly #events: Set<string>;
  readonly #steps: Set<string>;

  constructor(
    runId: string,
    loaded: LoadedState,
    chain: PgChain,
    private readonly o: Settled,
  ) {
    super(runId, loaded, o.clock);
    this.log = `engine:audit/${runId}`;
    this.#chain = chain;
    this.#events = new Set(chain.events);
    this.#steps = new Set(chain.steps);
  }

  hasRecorded(event: string): boolean {
    return this.#events.has(event);
  }

  recordedSteps(): ReadonlySet<string> {
    return this.#steps;
  }

  filePath(name: RunFileName): string {
    return `engine:runs/${this.runId}/${name}`;
  }

  async close(): Promise<void> {
    // Every commit was a whole transaction: nothing is left open.
  }

  protected async write(commit: ResolvedCommit): Promise<void> {
    const { engine, fence } = this.o;
    const composed = composePgRecords(this.#chain, commit.records, { runId: this.runId, ...this.o });
    await engine.tx(async (db) => {
      if (commit.changesState && commit.after) await writeRunState(db, commit.after);
      await insertPgRecords(db, this.runId, composed);
      await writeRunFiles(db, this.runId, commit.files, commit.removeFiles);
    }, fence);
    this.#chain = composed;
    for (const row of composed.rows) {
      this.#events.add(row.event);
      if (row.step) this.#steps.add(row.step);
    }
  }
}
