import { startedEvent, type Claim, type ClaimStore, type CommandInbox, type WatchEvent, type WatchState } from '../domain/queue.js';
import { ClaimSlots, type SlotRun } from './claim-slots.js';
import { FileClaims } from './file-claims.js';
import { interruptClaim } from './run-claim.js';
import type { RunDeps } from './run-deps.js';
import type { RouteGate } from './route-breaker.js';

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
  /** The routes' circuit breaker: a command that needs a route that is down stays in `commands/`. */
  readonly routeGate?: RouteGate;
  /** How many runs go at once in this process (default 1): each still claimed, checkpointed and finished once. */
  readonly concurrency?: number;
}

/**
 * `maestro watch`: recovers what was in flight, then takes ready command files oldest first, up to
 * `concurrency` runs at a time, through `processCommand` (the same use case as `maestro run`). A run
 * holds its slot until it has finished (artifact, memory, last commit): at `--concurrency 1` the
 * loop is one state machine, AWAITING_COMMAND → EXECUTING_TASK → PRODUCING_ARTIFACT → AWAITING_COMMAND.
 * Every file gets an error boundary, so one failing command never stops the loop. `stop()` aborts
 * every run in flight at its checkpoint, releases the inbox and resolves once nothing is running.
 */
export class WatchLoop {
  readonly #o: WatchLoopOptions;
  /** Where claims come from: recovered ones, decided runs, then files in commands/. */
  readonly #source: FileClaims;
  /** The queue runner: slots, task lines and each claim's way through the state machine. */
  readonly #slots: ClaimSlots<Claim>;
  /** The loop's own state while no run is in flight: awaiting a command, or stopped. */
  #state: 'AWAITING_COMMAND' | 'STOPPED' = 'AWAITING_COMMAND';
  #stopping: 'signal' | 'once' | undefined;
  #running: Promise<void> = Promise.resolve();
  /** The problems last reported by `preflight`, so a broken workspace is announced once, not per file. */
  #broken: string | undefined;
  #recheck: NodeJS.Timeout | undefined;
  readonly #stopped: Promise<'signal' | 'once'>;
  #resolveStopped: (reason: 'signal' | 'once') => void = () => undefined;

  constructor(options: WatchLoopOptions) {
    this.#o = options;
    this.#stopped = new Promise((resolve) => (this.#resolveStopped = resolve));
    const { inbox, decisions, claims, routeGate, deps } = options;
    this.#source = new FileClaims({
      inbox,
      ...(decisions ? { decisions } : {}),
      claims,
      ...(routeGate ? { routeGate } : {}),
      newRunId: () => deps.newRunId(),
      sourceOf: async (runId) => (await deps.ledger.load(runId).catch(() => undefined))?.source ?? `${runId}.json`,
      mayTakeFiles: () => this.#workspaceUsable(),
      stopping: () => this.#stopping !== undefined,
      notice: (runId, message) => this.#notice(runId, message),
    });
    this.#slots = new ClaimSlots({
      ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
      ...(options.routeGate ? { routeGate: options.routeGate } : {}),
      onEvent: options.onEvent,
      queued: () => this.#source.queued,
    });
  }

  /** Resolves when the loop has stopped: after `stop()`, or when `once` has drained the queue. */
  get stopped(): Promise<'signal' | 'once'> {
    return this.#stopped;
  }

  /** The loop's state: a run's while one is in flight (the furthest along of them), else the loop's own. */
  get state(): WatchState {
    return this.#slots.state ?? this.#state;
  }

  /** The runs in flight now, oldest claim first. */
  get inFlight(): readonly Claim[] {
    return this.#slots.inFlight(true);
  }

  async start(): Promise<void> {
    const { recovered, ownedByOthers } = await this.#o.claims.recoverOrphans();
    this.#source.recovered.push(...recovered);
    if (this.#stopping) return;
    const wake = () => this.#slots.wake();
    await this.#o.routeGate?.start(wake);
    await this.#o.decisions?.start(wake);
    await this.#o.inbox.start(wake);
    if (this.#stopping) return;
    this.#o.onEvent(startedEvent(this.#o, recovered.length, ownedByOthers));
    this.#running = this.#slots.run(this.#source, { open: (claim, { signal }) => this.#open(claim, signal), done: () => this.#drained() });
    void this.#running.then(() => this.#shutdown('once'));
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
    this.#slots.stop(reason === 'signal' ? new Error('the watcher is stopping') : undefined);
    await Promise.all([this.#o.inbox.close(), this.#o.decisions?.close()]);
    await this.#running;
    const from = this.state;
    this.#state = 'STOPPED';
    this.#o.onEvent({ kind: 'stopped', state: 'STOPPED', from, reason, left });
    this.#resolveStopped(reason);
  }

  /**
   * With `--once`, whether the watch is over: nothing recovered, ready or being written is left and no
   * run is in flight; or the commands left wait for a route that is down (said once).
   */
  #drained(): boolean {
    if (!this.#o.once) return false;
    if (this.#source.waiting > 0) {
      this.#notice(null, `${this.#source.waiting} command(s) wait in commands/ for a route that is down; --once stops here`);
      return true;
    }
    const idle = [this.#o.inbox, this.#o.decisions].every((i) => !i || (i.ready === 0 && i.pending === 0));
    return this.#source.recovered.length === 0 && idle && this.#slots.busy === 0;
  }

  /** A claim's slot; stopped, its run stays in .maestro/inflight/ and the next start resumes it. */
  #open(claim: Claim, signal: AbortSignal): SlotRun {
    return {
      deps: { claims: this.#o.claims, run: { ...this.#o.deps, signal } },
      interrupted: (_error, claimDeps) => {
        // Only the watcher's stop gets here: that is the why; the abort's own words ("The operation was
        // aborted", "the watcher is stopping", whichever reached the run first) say nothing more.
        const why = 'interrupted at its last checkpoint: the watcher was stopped; the next start resumes it';
        return interruptClaim(claim, claimDeps, 'interrupted', why);
      },
    };
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
    this.#recheck = setTimeout(() => this.#slots.wake(), this.#o.preflightRetryMs ?? 2000);
    this.#recheck.unref?.();
    if (this.#o.once) void this.#shutdown('once');
    return false;
  }

  #notice(runId: string | null, message: string): void {
    this.#o.onEvent({ kind: 'notice', run_id: runId, message });
  }
}
