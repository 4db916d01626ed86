import type { Clock, RunReader } from '../domain/ports.js';
import type { ReadyFile } from '../domain/queue.js';
import {
  DEFAULT_PROBE_BACKOFF,
  dueProbes,
  isOutageFailure,
  probeFailed,
  routeRecovered,
  routesDown,
  routesOfOutage,
  tripRoute,
  untilNextProbe,
  type Breaker,
  type ProbeBackoff,
  type RouteHealthFile,
} from '../domain/route-breaker.js';

/**
 * What the watch and worker loops ask before they take a command, and tell when a run ended: the
 * loops know nothing of routes, only "may I take this now?" and "this run ended".
 */
export interface RouteGate {
  /** Starts probing what is already known to be down; `wake` is called when a route answers again. */
  start(wake: () => void): Promise<void>;
  /** False while a route the command needs is down (the command then stays queued); undefined `file`: any command. */
  mayClaim(file?: ReadyFile): Promise<boolean>;
  /** False while a route a decided run needs is down (its decision then stays queued). */
  mayResume?(runId: string): Promise<boolean>;
  /** A run ended (or paused): when its pause is an outage of a route, that route is down from now. */
  afterRun(runId: string): Promise<void>;
  stop(): void;
}

/** A run paused by an outage of a route. */
interface OutagePause {
  readonly runId: string;
  readonly route: string;
  /** `route` and the routes the run fell back from, on an outage, to reach it: all of them down. */
  readonly routes: readonly string[];
  readonly failure: string;
  readonly message: string;
}

export interface RouteBreakerOptions {
  /** The runs: a paused run's pause names the route whose outage paused it. */
  readonly ledger: RunReader;
  /** The routes a queued command needs (its personas' routes); [] when that cannot be told (it is then taken, and judged by the run). */
  readonly routesOf: (file: ReadyFile) => Promise<readonly string[]>;
  /** The routes a run needs to go on (its council's routes, and the fallbacks it moved to); [] when that cannot be told. */
  readonly routesOfRun?: (runId: string) => Promise<readonly string[]>;
  /** One attempt at the route, no retries: undefined when it answers, else why not (an outage: it is still down). */
  readonly probe: (route: string) => Promise<string | undefined>;
  /** Resumes a run paused by an outage of `route` (the system's decision, taken under the run's lock). */
  readonly resume: (runId: string, route: string) => Promise<void>;
  /** `resume_after_outage`: whether runs paused by an outage resume on their own when the route answers. */
  readonly resumeAfterOutage: boolean;
  readonly clock: Clock;
  /** Where `maestro status` reads which routes are down (best effort). */
  readonly save: (health: RouteHealthFile) => Promise<void>;
  readonly pid: number;
  /** One line for people: a route went down, answers again, a run resumed. */
  readonly onNotice: (runId: string | null, message: string) => void;
  readonly backoff?: ProbeBackoff;
}

/**
 * A circuit breaker per route (`domain/route-breaker.ts`) with its probes: a route whose outage
 * paused a run is down, commands that need it wait in the queue, and it is probed with a growing
 * wait. When it answers, the loop is woken to take the waiting commands, and (with
 * `resume_after_outage`) the runs its outage paused are continued; every other pause still waits
 * for a person.
 */
export class RouteBreaker implements RouteGate {
  readonly #o: RouteBreakerOptions;
  readonly #backoff: ProbeBackoff;
  #down: Breaker = {};
  #timer: NodeJS.Timeout | undefined;
  #probing = false;
  #stopped = false;
  #wake: () => void = () => undefined;

  constructor(options: RouteBreakerOptions) {
    this.#o = options;
    this.#backoff = options.backoff ?? DEFAULT_PROBE_BACKOFF;
  }

  /** The routes that are down now. */
  get down(): Breaker {
    return this.#down;
  }

  /**
   * Runs paused by an outage before this process started: their routes are probed now; those that
   * answer have their runs resumed (with `resume_after_outage`), the others are down and probed on.
   */
  async start(wake: () => void): Promise<void> {
    this.#wake = wake;
    const paused = await this.#outagePauses();
    for (const route of new Set(paused.flatMap((p) => p.routes))) {
      const why = await this.#o.probe(route).catch((error: unknown) => (error as Error).message);
      if (why === undefined) {
        await this.#resumePaused(route, paused);
        continue;
      }
      const first = paused.find((p) => p.routes.includes(route));
      this.#trip({ route, failure: first?.failure ?? 'network', message: why });
      this.#o.onNotice(null, `route "${route}" is still down (${why}); the runs its outage paused wait for it`);
    }
    await this.#changed();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  async mayClaim(file?: ReadyFile): Promise<boolean> {
    if (Object.keys(this.#down).length === 0) return true;
    if (!file) return false;
    const needs = await this.#o.routesOf(file).catch(() => []);
    return routesDown(this.#down, needs).length === 0;
  }

  async mayResume(runId: string): Promise<boolean> {
    if (Object.keys(this.#down).length === 0 || !this.#o.routesOfRun) return true;
    const needs = await this.#o.routesOfRun(runId).catch(() => []);
    return routesDown(this.#down, needs).length === 0;
  }

  async afterRun(runId: string): Promise<void> {
    const outage = await this.#outagePause(runId);
    if (!outage) return;
    for (const route of outage.routes) {
      const first = this.#down[route] === undefined;
      this.#trip({ route, failure: outage.failure, message: outage.message });
      if (!first) continue;
      this.#o.onNotice(
        runId,
        `route "${route}" is down (${outage.failure}): commands that need it stay in commands/ until it answers; ` +
          'it is probed with a growing wait',
      );
    }
    await this.#changed();
  }

  #trip(failed: { route: string; failure: string; message: string }): void {
    this.#down = tripRoute(this.#down, failed, this.#o.clock.now(), this.#backoff);
  }

  /** Saves what is down and sets the timer for the next probe. */
  async #changed(): Promise<void> {
    const health = { pid: this.#o.pid, updated_at: this.#o.clock.now().toISOString(), down: { ...this.#down } };
    await this.#o
      .save(health)
      .catch((error: unknown) => this.#o.onNotice(null, `could not save the routes' health: ${(error as Error).message}`));
    clearTimeout(this.#timer);
    const wait = untilNextProbe(this.#down, this.#o.clock.now());
    if (wait === undefined || this.#stopped) return;
    this.#timer = setTimeout(() => void this.#probeDue(), wait);
    this.#timer.unref?.();
  }

  async #probeDue(): Promise<void> {
    if (this.#probing || this.#stopped) return;
    this.#probing = true;
    try {
      for (const route of dueProbes(this.#down, this.#o.clock.now())) {
        const why = await this.#o.probe(route).catch((error: unknown) => (error as Error).message);
        if (this.#stopped) return;
        if (why === undefined) await this.#recovered(route);
        else this.#down = probeFailed(this.#down, route, why, this.#o.clock.now(), this.#backoff);
      }
    } finally {
      this.#probing = false;
      if (!this.#stopped) await this.#changed();
    }
  }

  async #recovered(route: string): Promise<void> {
    const was = this.#down[route];
    this.#down = routeRecovered(this.#down, route);
    const since = was ? ` (down since ${was.since})` : '';
    this.#o.onNotice(null, `route "${route}" answers again${since}: taking the commands that waited for it`);
    await this.#resumePaused(route, await this.#outagePauses());
    this.#wake();
  }

  /** Continues the runs an outage of `route` paused (or says they wait for a person). */
  async #resumePaused(route: string, pauses: readonly OutagePause[]): Promise<void> {
    const paused = pauses.filter((p) => p.route === route);
    if (paused.length > 0 && !this.#o.resumeAfterOutage) {
      this.#o.onNotice(null, `${paused.length} run(s) paused by its outage wait for a person (resume_after_outage is false)`);
    }
    for (const p of this.#o.resumeAfterOutage ? paused : []) {
      await this.#o.resume(p.runId, route).then(
        () => this.#o.onNotice(p.runId, `run ${p.runId} resumes on its own: route "${route}" answers again`),
        (error: unknown) => this.#o.onNotice(p.runId, `run ${p.runId} was not resumed: ${(error as Error).message}`),
      );
    }
  }

  /** The paused runs whose pause is an outage of a route. */
  async #outagePauses(): Promise<OutagePause[]> {
    const found: OutagePause[] = [];
    for (const runId of await this.#o.ledger.list().catch(() => [])) {
      const outage = await this.#outagePause(runId);
      if (outage) found.push(outage);
    }
    return found;
  }

  /** The run's pause, when it is an outage of a route. */
  async #outagePause(runId: string): Promise<OutagePause | undefined> {
    const state = await this.#o.ledger.load(runId).catch(() => undefined);
    const outage = state?.status === 'paused' ? state.pause?.outage : undefined;
    if (!outage || !isOutageFailure(outage.failure)) return undefined;
    const routes = routesOfOutage(outage.route, state?.reroutes);
    return { runId, ...outage, routes, message: state?.pause?.message.split('\n')[0] ?? '' };
  }
}
