import type { ProgressEvent } from '../domain/ports.js';
import {
  isAllowedTransition,
  runProgressEvent,
  type Claim,
  type ClaimStore,
  type ReadyFile,
  type CommandInbox,
  type WatchEvent,
  type WatchState,
} from '../domain/queue.js';
import { planClaim, recordInterruption, runClaim, settleClaim, type ClaimResult, type ResumeKind, type RunClaimDeps } from './run-claim.js';
import type { RunDeps } from './run-deps.js';
import type { RouteGate } from './route-breaker.js';
import { LINE_WAIT, TaskLines, taskLineOf } from './task-lines.js';
import { HeadsFirst } from './heads-first.js';

export interface WatchLoopOptions {
  /** Wired once by `createApp`; the loop adds its own progress hook and stop signal per run. */
  readonly deps: RunDeps;
  readonly inbox: CommandInbox;
  /** `.maestro/decisions/`: paused runs a person chose to continue, resumed here from their checkpoint. */
  readonly decisions?: CommandInbox;
  readonly claims: ClaimStore;
  readonly onEvent: (event: WatchEvent) => void;
  /** Process what is queued (recovered claims included), then stop. */
  readonly once: boolean;
  readonly pid: number;
  readonly workspace: string;
  /**
   * Checked before each new command is claimed: problems that would stop every run (broken personas or
   * routes). While it reports any, commands stay in `commands/` untouched and the loop checks again.
   */
  readonly preflight?: () => Promise<string[]>;
  /** How often a broken workspace is checked again (default 2 s). */
  readonly preflightRetryMs?: number;
  /** Resolves once the model request just begun has left (HeadsFirst: a run's head ends there). */
  readonly requestSent?: () => Promise<void>;
  /** The routes' circuit breaker: a command that needs a route that is down stays in `commands/`. */
  readonly routeGate?: RouteGate;
  /** How many runs go at once in this process (default 1): each still claimed, checkpointed and finished once. */
  readonly concurrency?: number;
}

/**
 * Runs in their tail (writing their memory, making their artifact durable, their last commit) a slot
 * may have beside its running one. A tail waits for the next run's head (HeadsFirst) and then writes
 * beside that run's calls: with fast calls (a local model) a slot's runs can end faster than their
 * tails' fsyncs land, and a few tails in flight absorb that instead of holding up the next command.
 */
const TAILS_PER_SLOT = 4;

/** A run this loop has in flight, with its own place in the state machine. */
interface InFlight {
  readonly claim: Claim;
  state: WatchState;
}

/**
 * `maestro watch`: recovers what was in flight, then takes ready command files oldest first, up to
 * `concurrency` runs at a time, through `processCommand` (the same use case as `maestro run`). Every
 * file gets an error boundary, so one failing command never stops the loop. `stop()` aborts every run
 * in flight at its checkpoint, releases the inbox and resolves once nothing is running.
 */
export class WatchLoop {
  readonly #o: WatchLoopOptions;
  readonly #controller = new AbortController();
  readonly #recovered: Claim[] = [];
  readonly #claimDeps: RunClaimDeps;
  /** The loop's own state while no run is in flight: awaiting a command, or stopped. */
  #state: 'AWAITING_COMMAND' | 'STOPPED' = 'AWAITING_COMMAND';
  #busy = false;
  #again = false;
  #started = false;
  #stopping: 'signal' | 'once' | undefined;
  #pumping: Promise<void> = Promise.resolve();
  /** Runs in flight, by run id (their events carry it). */
  readonly #runs = new Map<string, InFlight>();
  /** Every claim being handled (planning and settling included): what a free slot is counted against. */
  readonly #tasks = new Set<Promise<void>>();
  /** Runs whose model calls and artifact are done, still writing their memory and last records: they hold no slot. */
  readonly #tailing = new Set<string>();
  /** Runs on their way to their first call go before the writes of runs in their tail. */
  readonly #headsFirst: HeadsFirst;
  readonly #concurrency: number;
  /** Runs on one task line go one at a time (the loop policy's counters move as if serial). */
  readonly #lines = new TaskLines();
  /** Decided runs held back for a route that is down (said once each). */
  readonly #held = new Set<string>();
  /** The problems last reported by `preflight`, so a broken workspace is announced once, not per file. */
  #broken: string | undefined;
  #recheck: NodeJS.Timeout | undefined;
  readonly #stopped: Promise<'signal' | 'once'>;
  #resolveStopped: (reason: 'signal' | 'once') => void = () => undefined;

  constructor(options: WatchLoopOptions) {
    this.#o = options;
    this.#concurrency = Math.max(1, Math.floor(options.concurrency ?? 1));
    this.#headsFirst = new HeadsFirst(undefined, options.requestSent);
    this.#stopped = new Promise((resolve) => (this.#resolveStopped = resolve));
    const { deps } = options;
    this.#claimDeps = {
      claims: options.claims,
      run: {
        ...deps,
        signal: this.#controller.signal,
        onProgress: (event) => {
          // A run's first event after its claim comes as its first call starts: its head is done once that request has left.
          this.#headsFirst.started(event.run_id);
          deps.onProgress?.(event);
          this.#onProgress(event);
        },
        afterHeads: () => this.#headsFirst.quiet(),
        onTail: (runId) => {
          deps.onTail?.(runId);
          // Its slot is free for the next command; stop and `--once` still wait for the whole run (#tasks).
          if (!this.#runs.has(runId)) return;
          this.#tailing.add(runId);
          this.#wake();
        },
      },
    };
  }

  /** Resolves when the loop has stopped: after `stop()`, or when `once` has drained the queue. */
  get stopped(): Promise<'signal' | 'once'> {
    return this.#stopped;
  }

  /** The loop's state: a run's while one is in flight (the furthest along of them), else the loop's own. */
  get state(): WatchState {
    const states = [...this.#runs.values()].map((r) => r.state);
    if (states.includes('PRODUCING_ARTIFACT')) return 'PRODUCING_ARTIFACT';
    return states.length > 0 ? 'EXECUTING_TASK' : this.#state;
  }

  /** The runs in flight now, oldest claim first. */
  get inFlight(): readonly Claim[] {
    return [...this.#runs.values()].map((r) => r.claim);
  }

  async start(): Promise<void> {
    const { recovered, ownedByOthers } = await this.#o.claims.recoverOrphans();
    this.#recovered.push(...recovered);
    if (this.#stopping) return;
    await this.#o.routeGate?.start(() => this.#wake());
    await this.#o.decisions?.start(() => this.#wake());
    await this.#o.inbox.start(() => this.#wake());
    if (this.#stopping) return;
    this.#o.onEvent({
      kind: 'started',
      state: 'AWAITING_COMMAND',
      pid: this.#o.pid,
      workspace: this.#o.workspace,
      once: this.#o.once,
      recovered: recovered.length,
      owned_by_others: ownedByOthers,
    });
    this.#started = true;
    this.#wake();
  }

  /** Stops picking up, aborts every run in flight at its checkpoint, and resolves once all have stopped. */
  async stop(): Promise<void> {
    await this.#shutdown('signal');
  }

  async #shutdown(reason: 'signal' | 'once'): Promise<void> {
    if (this.#stopping) return void (await this.#stopped);
    this.#stopping = reason;
    // Counted before the inbox closes: what `--once` leaves queued is said, not "the queue is empty".
    const left = this.#o.inbox.ready + this.#o.inbox.pending;
    clearTimeout(this.#recheck);
    this.#o.routeGate?.stop();
    if (reason === 'signal') this.#controller.abort(new Error('the watcher is stopping'));
    await Promise.all([this.#o.inbox.close(), this.#o.decisions?.close()]);
    await this.#pumping;
    while (this.#tasks.size > 0) await Promise.allSettled([...this.#tasks]);
    const from = this.state;
    this.#state = 'STOPPED';
    this.#o.onEvent({ kind: 'stopped', state: 'STOPPED', from, reason, left });
    this.#resolveStopped(reason);
  }

  #wake(): void {
    this.#again = true;
    if (!this.#started || this.#busy || this.#stopping) return;
    this.#busy = true;
    this.#headsFirst.claiming(true);
    this.#pumping = this.#pump().finally(() => {
      this.#busy = false;
      this.#headsFirst.claiming(false);
      if (this.#again && !this.#stopping && this.#mayClaim()) return this.#wake();
      const idle = [this.#o.inbox, this.#o.decisions].every((i) => !i || (i.ready === 0 && i.pending === 0));
      const drained = this.#recovered.length === 0 && idle && this.#tasks.size === 0;
      if (this.#o.once && !this.#stopping && drained) void this.#shutdown('once');
    });
  }

  /** Fills the free slots: claims and starts runs until every slot is taken or nothing is ready. */
  async #pump(): Promise<void> {
    while (this.#again && !this.#stopping) {
      this.#again = false;
      while (this.#mayClaim()) {
        const claim = await this.#next();
        if (!claim) break;
        this.#launch(claim);
      }
    }
  }

  /**
   * The one place that says whether another command may be claimed now. Runs in their tail free their
   * slot, but at most TAILS_PER_SLOT × `concurrency` of them: saves that cannot land (another watcher
   * holds the memory file) must not let this watcher claim the whole queue, its runs piling up in
   * their tail.
   */
  #mayClaim(): boolean {
    const tails = Math.min(this.#tailing.size, TAILS_PER_SLOT * this.#concurrency);
    return !this.#stopping && this.#tasks.size - tails < this.#concurrency;
  }

  /** Handles a claim beside the others in flight; its slot is freed (and the queue looked at again) when it is done. */
  #launch(claim: Claim): void {
    this.#headsFirst.begin(claim.runId);
    const task = this.#handle(claim)
      .catch((error: unknown) => {
        // The last boundary: a bug or a broken output stream must not stop the watcher.
        this.#runs.delete(claim.runId);
        this.#notice(claim.runId, `internal error while handling ${claim.source}: ${(error as Error).message}`);
      })
      .finally(() => {
        this.#headsFirst.end(claim.runId);
        this.#tasks.delete(task);
        this.#tailing.delete(claim.runId);
        this.#wake();
      });
    this.#tasks.add(task);
  }

  /** The next claim: recovered ones first, then decided runs, then the oldest ready file that this watcher wins. */
  async #next(): Promise<Claim | undefined> {
    if (this.#stopping) return undefined;
    const recovered = this.#recovered.shift();
    if (recovered) return recovered;
    const decided = await this.#nextDecision();
    if (decided) return decided;
    if (this.#o.inbox.ready > 0 && !(await this.#workspaceUsable())) return undefined;
    const waiting: ReadyFile[] = [];
    try {
      for (let file = this.#o.inbox.take(); file && !this.#stopping; file = this.#o.inbox.take()) {
        if (this.#o.routeGate && !(await this.#o.routeGate.mayClaim(file))) {
          waiting.push(file);
          continue;
        }
        try {
          const claim = await this.#o.claims.claim(file, this.#o.deps.newRunId());
          if (claim) return claim;
        } catch (error) {
          this.#notice(null, `could not claim commands/${file.name}: ${(error as Error).message}; it stays in commands/`);
        }
      }
    } finally {
      // Commands waiting for a route stay queued, in their order; the breaker wakes the loop when it answers.
      for (const file of waiting) this.#o.inbox.putBack(file);
    }
    if (waiting.length > 0 && this.#o.once) {
      this.#notice(null, `${waiting.length} command(s) wait in commands/ for a route that is down; --once stops here`);
      void this.#shutdown('once');
    }
    return undefined;
  }

  /** The next decided run to resume; a run that needs a route that is down stays in .maestro/decisions/ until it answers. */
  async #nextDecision(): Promise<Claim | undefined> {
    const held: ReadyFile[] = [];
    try {
      for (let file = this.#o.decisions?.take(); file && !this.#stopping; file = this.#o.decisions?.take()) {
        const runId = /^([A-Za-z0-9_-]+)\.json$/.exec(file.name)?.[1];
        if (!runId) continue;
        if (this.#o.routeGate?.mayResume && !(await this.#o.routeGate.mayResume(runId))) {
          held.push(file);
          if (!this.#held.has(runId))
            this.#notice(runId, `run ${runId} was continued but waits for a route that is down; it resumes when it answers`);
          this.#held.add(runId);
          continue;
        }
        this.#held.delete(runId);
        try {
          const source = (await this.#o.deps.ledger.load(runId).catch(() => undefined))?.source ?? `${runId}.json`;
          const claim = await this.#o.claims.claimDecision(file, runId, source);
          if (claim) return claim;
        } catch (error) {
          this.#notice(runId, `could not take the decision on run ${runId}: ${(error as Error).message}; it stays in .maestro/decisions/`);
        }
      }
    } finally {
      for (const file of held) this.#o.decisions?.putBack(file);
    }
    return undefined;
  }

  /** False (after saying why, once) while the workspace cannot run commands; checks again on a timer. */
  async #workspaceUsable(): Promise<boolean> {
    if (!this.#o.preflight) return true;
    const problems = await this.#o.preflight().catch((error: unknown) => [`the workspace check failed: ${(error as Error).message}`]);
    const summary = problems.join('\n');
    if (problems.length === 0) {
      if (this.#broken !== undefined) this.#notice(null, 'the workspace is fixed: taking commands again');
      this.#broken = undefined;
      return true;
    }
    if (summary !== this.#broken) {
      this.#notice(
        null,
        `the workspace cannot run commands, so none is taken (they stay in commands/) until it is fixed:\n${problems.map((p) => `  ${p}`).join('\n')}`,
      );
    }
    this.#broken = summary;
    clearTimeout(this.#recheck);
    this.#recheck = setTimeout(() => this.#wake(), this.#o.preflightRetryMs ?? 2000);
    this.#recheck.unref?.();
    if (this.#o.once) void this.#shutdown('once');
    return false;
  }

  async #handle(claim: Claim): Promise<void> {
    const plan = await planClaim(claim, this.#claimDeps);
    if (plan.ended) {
      const result = await settleClaim(claim, plan.ended, this.#claimDeps);
      this.#notice(claim.runId, `${claim.source}: ${result.message}`);
      return;
    }
    const run: InFlight = { claim, state: 'AWAITING_COMMAND' };
    this.#runs.set(claim.runId, run);
    this.#transition(run, {
      kind: 'claimed',
      state: 'EXECUTING_TASK',
      from: run.state,
      run_id: claim.runId,
      source: claim.source,
      resume: plan.kind,
    });
    let result: ClaimResult;
    try {
      result = await this.#runOnItsLine(claim, plan.kind);
    } catch (error) {
      // Only an interruption escapes runClaim: the claim stays in .maestro/inflight/ for the next start.
      const auditLog = await recordInterruption(claim, this.#claimDeps);
      result = {
        run_id: claim.runId,
        source: claim.source,
        status: 'interrupted',
        decision: null,
        reason_code: 'RUN_INTERRUPTED_AT_CHECKPOINT',
        artifact: null,
        audit_log: auditLog,
        rejected_to: null,
        // Only an interruption gets here: the signal's own words ("The operation was aborted") say nothing more.
        message: `interrupted at its last checkpoint: the watcher was stopped; the next start resumes it${error instanceof Error && error.name !== 'AbortError' ? ` (${error.message})` : ''}`,
      };
    } finally {
      this.#runs.delete(claim.runId);
    }
    await this.#o.routeGate?.afterRun(claim.runId).catch(() => undefined);
    const queued = this.#recovered.length + this.#o.inbox.ready + (this.#o.decisions?.ready ?? 0);
    this.#transition(run, { kind: 'finished', state: 'AWAITING_COMMAND', from: run.state, ...result, queued });
  }

  /** Runs the claim once no earlier run on its task line is in flight (only several runs at once can meet). */
  async #runOnItsLine(claim: Claim, kind: ResumeKind): Promise<ClaimResult> {
    const run = () => runClaim(claim, kind, this.#claimDeps);
    if (this.#concurrency === 1) return run();
    return this.#lines.hold(
      await taskLineOf(claim, kind, this.#claimDeps),
      () => {
        this.#headsFirst.begin(claim.runId);
        return run();
      },
      {
        signal: this.#controller.signal,
        onWait: () => {
          // Waiting for the run before it (its tail included), it is no head: that tail must not wait for it.
          this.#headsFirst.end(claim.runId);
          this.#notice(claim.runId, `${claim.source}: ${LINE_WAIT}`);
        },
      },
    );
  }

  #onProgress(event: ProgressEvent): void {
    const run = this.#runs.get(event.run_id);
    if (!run) return;
    const shown = runProgressEvent(event, run.state);
    if (shown?.kind === 'producing_artifact') this.#transition(run, shown);
    else if (shown) this.#o.onEvent(shown);
  }

  /** Moves one run through the state machine (each run in flight has its own place in it). */
  #transition(run: InFlight, event: Extract<WatchEvent, { kind: 'claimed' | 'producing_artifact' | 'finished' }>): void {
    if (!isAllowedTransition(run.state, event.state)) {
      this.#notice(event.run_id, `internal: unexpected transition ${run.state} → ${event.state}`);
    }
    run.state = event.state;
    this.#o.onEvent(event);
  }

  #notice(runId: string | null, message: string): void {
    this.#o.onEvent({ kind: 'notice', run_id: runId, message });
  }
}
