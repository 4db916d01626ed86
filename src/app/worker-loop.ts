import { runProgressEvent, type Claim, type WatchEvent, type WatchState } from '../domain/queue.js';
import { planClaim, recordInterruption, runClaim, settleClaim, type ClaimResult, type RunClaimDeps } from './run-claim.js';
import { EngineLink } from './engine-link.js';
import type { RunDeps } from './run-deps.js';
import type { RouteGate } from './route-breaker.js';
import type { InputHashes } from './verified-inputs.js';

/** A command an engine handed to this worker. */
export interface WorkClaim extends Claim {
  readonly epoch: number;
  readonly inputHashes: InputHashes;
}

/** This worker's hold on the engine: while it is alive, the claims it took are its own. */
export interface WorkerSession<C extends WorkClaim = WorkClaim> {
  readonly id: string;
  readonly alive: boolean;
  /** Resolves (with why) when the session ends: the connection broke or the engine went away. */
  readonly lost: Promise<string>;
  /** The oldest queued command (claims of dead workers are put back first); undefined when none is queued. */
  claimNext(): Promise<C | undefined>;
  /** Resolves when work may have arrived, after `ms` at the latest, or when the session is lost. */
  waitForWork(ms: number): Promise<void>;
  /** Gives an interrupted claim back to the queue (this worker is stopping). */
  requeue(claim: C): Promise<void>;
  setCurrent(runId: string | null): Promise<void>;
  close(): Promise<void>;
}

export interface WorkerLoopOptions<C extends WorkClaim, S extends WorkerSession<C>> {
  readonly openSession: () => Promise<S>;
  /**
   * The run's dependencies for one claim: stores fenced to it (a write after the claim is lost
   * calls `lost` and fails), the worker's own copy of the inputs checked against the intake's.
   */
  readonly depsFor: (claim: C, session: S, controls: { signal: AbortSignal; lost: (reason: string) => void }) => RunClaimDeps;
  readonly onEvent: (event: WatchEvent) => void;
  /** Take what is queued, then stop (tests, cron). */
  readonly once: boolean;
  readonly pid: number;
  readonly workspace: string;
  /** How long to wait for a notification before looking at the queue again (default 2 s). */
  readonly pollMs?: number;
  /** How long to wait before reconnecting to an engine that went away, the first time (default 250 ms); it doubles per failed try. */
  readonly reconnectMs?: number;
  /** The routes' circuit breaker: while a route is down this worker takes no command (they stay queued). */
  readonly routeGate?: RouteGate;
  /** The longest pause between tries while the engine stays away (default 15 s). */
  readonly maxReconnectMs?: number;
}

/**
 * `maestro worker`: takes commands from the engine one at a time and runs each through the same
 * use case as `maestro watch` (planClaim → runClaim → settle), with the same state machine and
 * events. If the engine goes away, the current run stops at its last checkpoint (its writes are
 * fenced, so nothing is written twice) and the worker reconnects; whichever worker is free then
 * resumes the run. `stop()` interrupts the current run and hands it back to the queue.
 */
export class WorkerLoop<C extends WorkClaim, S extends WorkerSession<C>> {
  readonly #o: WorkerLoopOptions<C, S>;
  #state: WatchState = 'AWAITING_COMMAND';
  #stopping = false;
  #session: S | undefined;
  #current: AbortController | undefined;
  #wakeIdle: (() => void) | undefined;
  #done: Promise<void> = Promise.resolve();
  /** Says once that the engine is lost and once that it is back, however long it takes. */
  readonly #link: EngineLink;

  constructor(options: WorkerLoopOptions<C, S>) {
    this.#o = options;
    const baseMs = options.reconnectMs ?? 250;
    this.#link = new EngineLink({
      notice: (message) => this.#notice(null, message),
      meanwhile: 'its run stops at its last checkpoint and is taken up again',
      baseMs,
      maxMs: Math.max(baseMs, options.maxReconnectMs ?? 15_000),
    });
  }

  get state(): WatchState {
    return this.#state;
  }

  /** Runs until `stop()` (or, with `once`, until the queue is empty); resolves when stopped. */
  run(): Promise<void> {
    this.#done = this.#loop();
    return this.#done;
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#o.routeGate?.stop();
    this.#current?.abort(new Error('the worker is stopping'));
    this.#wakeIdle?.();
    await this.#done;
  }

  async #loop(): Promise<void> {
    let announced = false;
    await this.#o.routeGate?.start(() => this.#wakeIdle?.());
    while (!this.#stopping) {
      const session = await this.#connect();
      if (!session) break;
      if (!announced) {
        announced = true;
        this.#o.onEvent({
          kind: 'started',
          state: 'AWAITING_COMMAND',
          pid: this.#o.pid,
          workspace: this.#o.workspace,
          once: this.#o.once,
          recovered: 0,
          owned_by_others: 0,
        });
      }
      // A route is down: the commands stay queued (for a worker whose routes answer) until it is back.
      if (this.#o.routeGate && !(await this.#o.routeGate.mayClaim())) {
        if (this.#o.once) break;
        await this.#idle(session);
        continue;
      }
      let claim: C | undefined;
      try {
        claim = await session.claimNext();
      } catch (error) {
        await this.#dropSession(`could not take work from the engine: ${(error as Error).message}`);
        continue;
      }
      if (!claim) {
        if (this.#o.once) break;
        await this.#idle(session);
        continue;
      }
      await this.#handle(claim, session);
    }
    await this.#session?.close();
    this.#session = undefined;
    const from = this.#state;
    this.#state = 'STOPPED';
    this.#o.onEvent({ kind: 'stopped', state: 'STOPPED', from, reason: this.#stopping ? 'signal' : 'once' });
  }

  /** The live session, opening one (again) if needed; undefined when stopping. */
  async #connect(): Promise<S | undefined> {
    while (!this.#stopping) {
      if (this.#session?.alive) return this.#session;
      if (this.#session) await this.#dropSession('the engine session ended');
      try {
        this.#session = await this.#o.openSession();
        this.#link.reached();
        return this.#session;
      } catch (error) {
        this.#link.lost(error);
        await this.#sleep(this.#link.pause());
      }
    }
    return undefined;
  }

  /** Closes a session that broke; the first loss of an outage is said (through the link), the rest are not. */
  async #dropSession(why: string): Promise<void> {
    const session = this.#session;
    this.#session = undefined;
    if (!session) return;
    this.#link.lost(new Error(why));
    await session.close().catch(() => undefined);
  }

  async #idle(session: S): Promise<void> {
    const wait = session.waitForWork(this.#o.pollMs ?? 2000);
    await Promise.race([wait, new Promise<void>((resolve) => (this.#wakeIdle = resolve))]);
    this.#wakeIdle = undefined;
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wakeIdle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  async #handle(claim: C, session: S): Promise<void> {
    const controller = new AbortController();
    this.#current = controller;
    let lostReason: string | undefined;
    const lost = (reason: string): void => {
      lostReason ??= reason;
      controller.abort(new Error(reason));
    };
    void session.lost.then(lost);
    const deps = this.#withProgress(this.#o.depsFor(claim, session, { signal: controller.signal, lost }), claim);
    try {
      const plan = await planClaim(claim, deps);
      if (plan.ended) {
        const settled = await settleClaim(claim, plan.ended, deps);
        this.#notice(claim.runId, `${claim.source}: ${settled.message}`);
        return;
      }
      this.#transition({
        kind: 'claimed',
        state: 'EXECUTING_TASK',
        from: this.#state,
        run_id: claim.runId,
        source: claim.source,
        resume: plan.kind,
      });
      let result: ClaimResult;
      try {
        result = await runClaim(claim, plan.kind, deps);
      } catch (error) {
        result = await this.#interrupted(claim, session, deps, lostReason ?? (error as Error).message);
      }
      await this.#o.routeGate?.afterRun(claim.runId).catch(() => undefined);
      this.#transition({ kind: 'finished', state: 'AWAITING_COMMAND', from: this.#state, ...result, queued: 0 });
    } catch (error) {
      // A failure outside the run (the engine went away while planning or settling): the claim stays
      // with this session, which is being dropped, so another worker (or this one) takes it up again.
      this.#state = 'AWAITING_COMMAND';
      this.#notice(
        claim.runId,
        `${claim.source}: left to the engine (${lostReason ?? (error as Error).message}); it is taken up again from its checkpoint`,
      );
    } finally {
      this.#current = undefined;
      await session.setCurrent(null);
    }
  }

  /** The run stopped at its last checkpoint: handed back when this worker stops, left to the engine when the claim was lost. */
  async #interrupted(claim: C, session: S, deps: RunClaimDeps, why: string): Promise<ClaimResult> {
    let auditLog: string | null = null;
    let message: string;
    if (this.#stopping && session.alive) {
      auditLog = await recordInterruption(claim, deps);
      await session.requeue(claim).catch(() => undefined);
      message = `interrupted at its last checkpoint (${why}); handed back to the queue, another worker resumes it`;
    } else {
      message = `stopped at its last checkpoint: ${why}; the engine gives it to the next free worker, which resumes it`;
    }
    return {
      run_id: claim.runId,
      source: claim.source,
      status: 'interrupted',
      decision: null,
      reason_code: 'RUN_INTERRUPTED_AT_CHECKPOINT',
      artifact: null,
      audit_log: auditLog,
      rejected_to: null,
      message,
    };
  }

  #withProgress(deps: RunClaimDeps, claim: WorkClaim): RunClaimDeps {
    const run: RunDeps = {
      ...deps.run,
      onProgress: (event) => {
        deps.run.onProgress?.(event);
        if (event.run_id !== claim.runId) return;
        const shown = runProgressEvent(event, this.#state);
        if (shown?.kind === 'producing_artifact') this.#transition(shown);
        else if (shown) this.#o.onEvent(shown);
      },
    };
    return { ...deps, run };
  }

  #transition(event: Extract<WatchEvent, { state: WatchState; from: WatchState }>): void {
    this.#state = event.state;
    this.#o.onEvent(event);
  }

  #notice(runId: string | null, message: string): void {
    this.#o.onEvent({ kind: 'notice', run_id: runId, message });
  }
}
