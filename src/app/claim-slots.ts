import {
  finishedEvent,
  isAllowedTransition,
  runProgressEvent,
  type Claim,
  type ClaimSource,
  type WatchEvent,
  type WatchState,
} from '../domain/queue.js';
import type { RouteGate } from './route-breaker.js';
import { failedOutsideRun, planClaim, runClaim, settleClaim, type ClaimResult, type ResumeKind, type RunClaimDeps } from './run-claim.js';
import { LINE_WAIT, TaskLines, taskLineOf } from './task-lines.js';

/** A claim this process handles, with its own place in the state machine (AWAITING_COMMAND until it is `claimed`). */
export interface InFlight<C extends Claim> {
  readonly claim: C;
  state: WatchState;
}

/** What a loop gives one claim it launches: the run's dependencies and how the loop reports what only it knows. */
export interface SlotRun {
  /** The run's dependencies; its stop signal is the slot's (`open`'s controller). */
  readonly deps: RunClaimDeps;
  /** The run stopped at its last checkpoint (a stop, a lost claim): its result, as the loop settles it. */
  readonly interrupted: (error: unknown, deps: RunClaimDeps) => Promise<ClaimResult>;
  /** A failure outside the run (planning, settling): what the loop says of it. Without it, it is an internal error. */
  readonly failed?: (error: unknown) => string;
  /** Once the claim has left its slot. */
  readonly done?: () => Promise<void>;
}

export interface ClaimSlotsOptions {
  /** How many runs go at once (default 1): each still claimed, checkpointed and finished once. */
  readonly concurrency?: number;
  readonly onEvent: (event: WatchEvent) => void;
  /** The routes' circuit breaker, told when each run has ended. */
  readonly routeGate?: RouteGate;
  /** What is still queued, for a run's `finished` event. */
  readonly queued: () => number;
}

/** How a loop runs its claims: what a claim's slot gets, and when there is nothing more to do. */
export interface RunnerOptions<C extends Claim> {
  readonly open: (claim: C, controller: AbortController) => SlotRun;
  /** Asked when nothing more could be claimed: true ends the run (`--once` with the queue drained). */
  readonly done: () => boolean;
  /** Looks at the source again after this long without a wake (a source whose notifications may be missed). */
  readonly pollMs?: number;
}

/**
 * The one way a loop is woken: `wake()` from whatever may make work claimable (a file ready, a slot
 * freed, a route back, an engine's notification, a stop); `wait` resolves at the next wake, at once
 * when one came since the last wait, or after `ms`.
 */
export class Wakeup {
  #woken = false;
  #resolve: (() => void) | undefined;

  wake(): void {
    this.#woken = true;
    this.#resolve?.();
  }

  async wait(ms?: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    if (!this.#woken)
      await new Promise<void>((resolve) => {
        this.#resolve = resolve;
        if (ms !== undefined) timer = setTimeout(resolve, ms);
      });
    clearTimeout(timer);
    this.#resolve = undefined;
    this.#woken = false;
  }
}

/**
 * The queue runner that `watch` and `worker` share: it claims from a ClaimSource (files, or an
 * engine's session) into run slots (a run holds its slot until it has finished: artifact, memory,
 * last commit), woken by one Wakeup; task lines (runs of one loop-policy conflict go one at a time);
 * and each claim's way through the one use case — planClaim → runClaim → settle — with its place in
 * the state machine and its events. At concurrency 1 it is one state machine:
 * AWAITING_COMMAND → EXECUTING_TASK → PRODUCING_ARTIFACT → AWAITING_COMMAND. The loops keep only
 * where claims come from and what they report.
 */
export class ClaimSlots<C extends Claim> {
  readonly #o: ClaimSlotsOptions;
  readonly #runs = new Map<string, InFlight<C>>();
  /** Every claim being handled (planning and settling included): what a free slot is counted against. */
  readonly #tasks = new Set<Promise<void>>();
  readonly #lines = new TaskLines();
  readonly #concurrency: number;
  readonly #controllers = new Set<AbortController>();
  readonly #wakeup = new Wakeup();
  #stopping = false;
  #abort: Error | undefined;

  constructor(options: ClaimSlotsOptions) {
    this.#o = options;
    this.#concurrency = Math.max(1, Math.floor(options.concurrency ?? 1));
  }

  /** The runs' state: the furthest along of those claimed, undefined while none is. */
  get state(): WatchState | undefined {
    const states = [...this.#runs.values()].map((r) => r.state);
    if (states.includes('PRODUCING_ARTIFACT')) return 'PRODUCING_ARTIFACT';
    return states.includes('EXECUTING_TASK') ? 'EXECUTING_TASK' : undefined;
  }

  /** The claims being handled now, oldest first (`claimed`: only those past their `claimed` event). */
  inFlight(claimed = false): C[] {
    return [...this.#runs.values()].filter((r) => !claimed || r.state !== 'AWAITING_COMMAND').map((r) => r.claim);
  }

  /** How many claims hold a slot. */
  get busy(): number {
    return this.#tasks.size;
  }

  /** Something may be claimable now: the runner looks at its source again. */
  wake(): void {
    this.#wakeup.wake();
  }

  /**
   * Claims from `source` into the free slots until stopped (or `done`), looking again at each wake
   * and each slot freed; resolves once every claim has left its slot.
   */
  async run(source: ClaimSource<C>, options: RunnerOptions<C>): Promise<void> {
    while (!this.#stopping) {
      while (!this.#stopping && this.#tasks.size < this.#concurrency) {
        const claim = await source.claimNext();
        if (!claim) break;
        this.#launch(claim, (controller) => options.open(claim, controller));
      }
      if (this.#stopping || options.done()) break;
      await this.#wakeup.wait(options.pollMs);
    }
    while (this.#tasks.size > 0) await Promise.allSettled([...this.#tasks]);
  }

  /** Stops claiming; with a reason, every run in flight (and any launched after) stops at its next checkpoint. */
  stop(abort?: Error): void {
    this.#stopping = true;
    if (abort) {
      this.#abort = abort;
      for (const controller of this.#controllers) controller.abort(abort);
    }
    this.#wakeup.wake();
  }

  /** Handles a claim beside the others in flight; its slot is freed (and the runner woken) when it is done. */
  #launch(claim: C, open: (controller: AbortController) => SlotRun): void {
    const task = this.#handle(claim, open)
      // The last boundary: a bug or a broken output stream must not stop the loop.
      .catch((error: unknown) => this.#notice(claim.runId, `internal error while handling ${claim.source}: ${(error as Error).message}`))
      .finally(() => {
        this.#tasks.delete(task);
        this.#wakeup.wake();
      });
    this.#tasks.add(task);
  }

  async #handle(claim: C, open: (controller: AbortController) => SlotRun): Promise<void> {
    const run: InFlight<C> = { claim, state: 'AWAITING_COMMAND' };
    const controller = new AbortController();
    this.#controllers.add(controller);
    this.#runs.set(claim.runId, run);
    if (this.#abort) controller.abort(this.#abort);
    const slot = open(controller);
    try {
      await this.#settle(run, slot, this.#withProgress(slot.deps, run), controller.signal);
    } catch (error) {
      const from = run.state;
      run.state = 'AWAITING_COMMAND';
      if (slot.failed) return this.#notice(claim.runId, slot.failed(error));
      if (controller.signal.aborted) throw error;
      // A bug outside the run's boundary: said, and counted against the claim (set aside after a few).
      this.#o.onEvent(finishedEvent(await failedOutsideRun(claim, error, slot.deps), from, this.#o.queued()));
    } finally {
      this.#runs.delete(claim.runId);
      this.#controllers.delete(controller);
      await slot.done?.();
    }
  }

  async #settle(run: InFlight<C>, slot: SlotRun, deps: RunClaimDeps, signal: AbortSignal): Promise<void> {
    const { claim } = run;
    const plan = await planClaim(claim, deps);
    if (plan.ended) {
      const settled = await settleClaim(claim, plan.ended, deps);
      this.#notice(claim.runId, `${claim.source}: ${settled.message}`);
      return;
    }
    // A command that does not parse is refused (as invalid, its file rejected) without being announced as executing.
    if (!plan.refused)
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
      result = await this.#onItsLine(claim, plan.kind, deps, signal);
    } catch (error) {
      // Only an interruption escapes runClaim: the loop says where the run goes on from its checkpoint.
      result = await slot.interrupted(error, deps);
    }
    await this.#o.routeGate?.afterRun(claim.runId).catch(() => undefined);
    const finished = finishedEvent(result, run.state, this.#o.queued());
    if (plan.refused) this.#o.onEvent(finished);
    else this.#transition(run, finished);
  }

  /** Runs the claim once no earlier run on its task line is in flight (only several runs at once can meet). */
  async #onItsLine(claim: C, kind: ResumeKind, deps: RunClaimDeps, signal: AbortSignal): Promise<ClaimResult> {
    const run = () => runClaim(claim, kind, deps);
    if (this.#concurrency === 1) return run();
    return this.#lines.hold(await taskLineOf(claim, kind, deps), run, {
      signal,
      onWait: () => this.#notice(claim.runId, `${claim.source}: ${LINE_WAIT}`),
    });
  }

  /** The run's progress, shown as the loop's events; `producing_artifact` moves the run in the state machine. */
  #withProgress(deps: RunClaimDeps, run: InFlight<C>): RunClaimDeps {
    const onProgress = deps.run.onProgress;
    return {
      ...deps,
      run: {
        ...deps.run,
        onProgress: (event) => {
          onProgress?.(event);
          if (event.run_id !== run.claim.runId) return;
          const shown = runProgressEvent(event, run.state);
          if (shown?.kind === 'producing_artifact') this.#transition(run, shown);
          else if (shown) this.#o.onEvent(shown);
        },
      },
    };
  }

  /** Moves one run through the state machine (each run in flight has its own place in it). */
  #transition(run: InFlight<C>, event: Extract<WatchEvent, { kind: 'claimed' | 'producing_artifact' | 'finished' }>): void {
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
