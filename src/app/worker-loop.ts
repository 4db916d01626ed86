import { startedEvent, type Claim, type ClaimSource, type WatchEvent, type WatchState } from '../domain/queue.js';
import { ClaimSlots, type SlotRun } from './claim-slots.js';
import { interruptClaim, type ClaimResult, type RunClaimDeps } from './run-claim.js';
import { EngineLink, isEngineOutage, isTransientOutage } from './engine-link.js';
import type { RouteGate } from './route-breaker.js';
import type { InputHashes } from './verified-inputs.js';

/** A command an engine handed to this worker. */
export interface WorkClaim extends Claim {
  readonly epoch: number;
  readonly inputHashes: InputHashes;
}

/** This worker's hold on the engine, and its claim source: while it is alive, the claims it took are its own. */
export interface WorkerSession<C extends WorkClaim = WorkClaim> extends ClaimSource<C> {
  readonly id: string;
  readonly alive: boolean;
  /** Resolves (with why) when the session ends: the connection broke or the engine went away. */
  readonly lost: Promise<string>;
  /** The oldest queued command (claims of dead workers are put back first); undefined when none is queued. */
  claimNext(): Promise<C | undefined>;
  /** Calls `wake` whenever work may have arrived (the engine's notification), and when the session is lost. */
  onWork(wake: () => void): void;
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
  /** How many runs go at once in this worker (default 1). */
  readonly concurrency?: number;
}

/**
 * `maestro worker`: takes commands from the engine, up to `concurrency` at a time, and runs each
 * through the same use case as `maestro watch` (planClaim → runClaim → settle), with the same state
 * machine (one place in it per run) and events. If the engine goes away, the runs in flight stop at
 * their last checkpoint (their writes are fenced, so nothing is written twice) and the worker
 * reconnects; whichever worker is free then resumes them. `stop()` interrupts every run in flight
 * and hands each back to the queue.
 */
export class WorkerLoop<C extends WorkClaim, S extends WorkerSession<C>> implements ClaimSource<C> {
  readonly #o: WorkerLoopOptions<C, S>;
  #state: 'AWAITING_COMMAND' | 'STOPPED' = 'AWAITING_COMMAND';
  #stopping = false;
  #session: S | undefined;
  /** The queue runner: slots, task lines and each claim's way through the state machine. */
  readonly #slots: ClaimSlots<C>;
  #done: Promise<void> = Promise.resolve();
  /** Says once that the engine is lost and once that it is back, however long it takes. */
  readonly #link: EngineLink;
  /** The pause before the next try to reach an engine that went away. */
  #retry: NodeJS.Timeout | undefined;
  #announced = false;
  /** The engine's queue had nothing for this worker at the last look. */
  #empty = false;
  /** An engine that cannot be used as it is (a login refused, a table gone): the worker stops, and `run()` rejects with it. */
  #unusable: Error | undefined;

  constructor(options: WorkerLoopOptions<C, S>) {
    this.#o = options;
    this.#slots = new ClaimSlots({
      ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
      ...(options.routeGate ? { routeGate: options.routeGate } : {}),
      onEvent: options.onEvent,
      queued: () => 0,
    });
    const baseMs = options.reconnectMs ?? 250;
    this.#link = new EngineLink({
      notice: (message) => this.#notice(null, message),
      meanwhile: 'its run stops at its last checkpoint and is taken up again',
      baseMs,
      // The longest pause between tries while the engine stays away: 15 s.
      maxMs: Math.max(baseMs, 15_000),
    });
  }

  /** The worker's state: a run's while one is in flight (the furthest along of them), else its own. */
  get state(): WatchState {
    return this.#slots.state ?? this.#state;
  }

  /** The run ids in flight now, oldest claim first. */
  get inFlight(): readonly string[] {
    return this.#slots.inFlight().map((c) => c.runId);
  }

  /** Runs until `stop()` (or, with `once`, until the queue is empty); resolves when stopped. */
  run(): Promise<void> {
    this.#done = this.#loop();
    return this.#done;
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#o.routeGate?.stop();
    clearTimeout(this.#retry);
    this.#slots.stop(new Error('the worker is stopping'));
    await this.#done;
  }

  async #loop(): Promise<void> {
    await this.#o.routeGate?.start(() => this.#slots.wake());
    await this.#slots.run(this, {
      open: (claim, controller) => this.#open(claim, controller),
      done: () => this.#o.once && this.#empty && this.#slots.busy === 0,
      pollMs: this.#o.pollMs ?? 2000,
    });
    clearTimeout(this.#retry);
    await this.#session?.close();
    this.#session = undefined;
    const from = this.state;
    this.#state = 'STOPPED';
    if (this.#unusable) throw this.#unusable;
    this.#o.onEvent({ kind: 'stopped', state: 'STOPPED', from, reason: this.#stopping ? 'signal' : 'once' });
  }

  /** True (and the worker stopping) when `error` says the engine cannot be used as it is: not a lost connection, waiting will not mend it. */
  #refuses(error: unknown): boolean {
    if (!isEngineOutage(error) || isTransientOutage(error)) return false;
    this.#unusable ??= error as Error;
    this.#stopping = true;
    this.#slots.stop(error as Error);
    return true;
  }

  /**
   * The claim source: the oldest queued command, over a live session (opened again after the engine
   * went away). Nothing while the engine is away or a route this worker uses is down (the commands
   * stay queued for a worker whose routes answer).
   */
  async claimNext(): Promise<C | undefined> {
    this.#empty = false;
    const session = await this.#connect();
    // A stop that came while the session was being opened: nothing more is claimed.
    if (!session || this.#stopping) return undefined;
    if (this.#o.routeGate && !(await this.#o.routeGate.mayClaim())) {
      if (this.#o.once) {
        this.#notice(null, 'a route this worker uses is down: --once stops here, and the queued commands stay in the engine');
        this.#slots.stop();
      }
      return undefined;
    }
    try {
      const claim = await session.claimNext();
      this.#empty = claim === undefined;
      return claim;
    } catch (error) {
      if (this.#refuses(error)) return undefined;
      await this.#dropSession(`could not take work from the engine: ${(error as Error).message}`);
      this.#slots.wake();
      return undefined;
    }
  }

  /** The live session, opening one (again) if needed; undefined while the engine is away (tried again after a growing pause). */
  async #connect(): Promise<S | undefined> {
    if (this.#session?.alive) return this.#session;
    if (this.#session) await this.#dropSession('the engine session ended');
    if (this.#retry || this.#stopping) return undefined;
    try {
      const session = await this.#o.openSession();
      this.#session = session;
      this.#link.reached();
      session.onWork(() => this.#slots.wake());
      void session.lost.then(() => this.#slots.wake());
      if (!this.#announced) this.#o.onEvent(startedEvent(this.#o));
      this.#announced = true;
      return session;
    } catch (error) {
      if (this.#refuses(error)) return undefined;
      this.#link.lost(error);
      this.#retry = setTimeout(() => {
        this.#retry = undefined;
        this.#slots.wake();
      }, this.#link.pause());
      return undefined;
    }
  }

  /** Closes a session that broke; the first loss of an outage is said (through the link), the rest are not. */
  async #dropSession(why: string): Promise<void> {
    const session = this.#session;
    this.#session = undefined;
    if (!session) return;
    this.#link.lost(new Error(why));
    await session.close().catch(() => undefined);
  }

  /**
   * A claim's slot, with stores fenced to it. A failure outside the run (the engine went away while
   * planning or settling) leaves the claim with this session, which is being dropped, so another
   * worker (or this one) takes it up again.
   */
  #open(claim: C, controller: AbortController): SlotRun {
    // The session the claim was just taken on: the runner opens a slot as soon as claimNext returns, and only claimNext changes sessions.
    const session = this.#session as S;
    let lostReason: string | undefined;
    const lost = (reason: string): void => {
      lostReason ??= reason;
      controller.abort(new Error(reason));
    };
    void session.lost.then(lost);
    return {
      deps: this.#o.depsFor(claim, session, { signal: controller.signal, lost }),
      interrupted: (error, deps) => this.#interrupted(claim, session, deps, lostReason ?? (error as Error).message),
      failed: (error) =>
        `${claim.source}: left to the engine (${lostReason ?? (error as Error).message}); it is taken up again from its checkpoint`,
      // `maestro status` names one run per worker: another still in flight here, else none.
      done: () => session.setCurrent(this.inFlight[0] ?? null),
    };
  }

  /** The run stopped at its last checkpoint: handed back when this worker stops, left to the engine when the claim was lost. */
  async #interrupted(claim: C, session: S, deps: RunClaimDeps, why: string): Promise<ClaimResult> {
    if (this.#stopping && session.alive) {
      // This worker is stopping: that is the why (an abort's own words, "The operation was aborted", say nothing more).
      const message = 'interrupted at its last checkpoint: this worker was stopped; handed back to the queue, another worker resumes it';
      const result = await interruptClaim(claim, deps, 'interrupted', message);
      await session.requeue(claim).catch(() => undefined);
      return result;
    }
    const message = `stopped at its last checkpoint: ${why}; the engine gives it to the next free worker, which resumes it`;
    return interruptClaim(claim, deps, 'claim_lost', message);
  }

  #notice(runId: string | null, message: string): void {
    this.#o.onEvent({ kind: 'notice', run_id: runId, message });
  }
}
