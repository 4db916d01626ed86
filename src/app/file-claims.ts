import type { Claim, ClaimSource, ClaimStore, CommandInbox, ReadyFile } from '../domain/queue.js';
import type { RouteGate } from './route-breaker.js';

export interface FileClaimsOptions {
  readonly inbox: CommandInbox;
  /** `.maestro/decisions/`: paused runs a person chose to continue. */
  readonly decisions?: CommandInbox;
  readonly claims: Pick<ClaimStore, 'claim' | 'claimDecision'>;
  /** The routes' circuit breaker: a command or decision that needs a route that is down stays queued. */
  readonly routeGate?: RouteGate;
  readonly newRunId: () => string;
  /** The command file a decided run came from, for its events (default `<run_id>.json`). */
  readonly sourceOf?: (runId: string) => Promise<string>;
  /** Whether new files may be taken now (a broken workspace takes none); decided runs go on regardless. */
  readonly mayTakeFiles?: () => Promise<boolean>;
  /** While true, nothing is taken. */
  readonly stopping: () => boolean;
  readonly notice: (runId: string | null, message: string) => void;
}

/**
 * The claim source over files: claims left by a watcher that died (`recovered`) first, then decided
 * runs, then the oldest ready file in `commands/` that this process wins (an atomic rename into
 * `.maestro/inflight/`). A worker's engine session is the same port over PostgreSQL.
 */
export class FileClaims implements ClaimSource {
  readonly #o: FileClaimsOptions;
  /** Claims taken over from watchers that are gone, run before anything new. */
  readonly recovered: Claim[] = [];
  /** Decided runs held back for a route that is down (said once each). */
  readonly #held = new Set<string>();
  /** How many commands the last look left in `commands/` for a route that is down. */
  waiting = 0;

  constructor(options: FileClaimsOptions) {
    this.#o = options;
  }

  /** Claims waiting to be taken (for a run's `finished` event). */
  get queued(): number {
    return this.recovered.length + this.#o.inbox.ready + (this.#o.decisions?.ready ?? 0);
  }

  async claimNext(): Promise<Claim | undefined> {
    this.waiting = 0;
    if (this.#o.stopping()) return undefined;
    const recovered = this.recovered.shift();
    if (recovered) return recovered;
    const decided = await this.#nextDecision();
    if (decided) return decided;
    if (this.#o.inbox.ready > 0 && this.#o.mayTakeFiles && !(await this.#o.mayTakeFiles())) return undefined;
    return this.#nextFile();
  }

  /** The oldest ready file this process wins; files waiting for a route that is down stay queued, in their order. */
  async #nextFile(): Promise<Claim | undefined> {
    const waiting: ReadyFile[] = [];
    try {
      // Looked at before each take: a file taken is claimed or put back, never dropped.
      while (!this.#o.stopping()) {
        const file = this.#o.inbox.take();
        if (!file) break;
        if (this.#o.routeGate && !(await this.#o.routeGate.mayClaim(file))) {
          waiting.push(file);
          continue;
        }
        try {
          const claim = await this.#o.claims.claim(file, this.#o.newRunId());
          if (claim) return claim;
        } catch (error) {
          this.#o.notice(null, `could not claim commands/${file.name}: ${(error as Error).message}; it stays in commands/`);
        }
      }
    } finally {
      // The breaker wakes the loop when the route answers.
      for (const file of waiting) this.#o.inbox.putBack(file);
      this.waiting = waiting.length;
    }
    return undefined;
  }

  /** The next decided run to resume; a run that needs a route that is down stays in .maestro/decisions/ until it answers. */
  async #nextDecision(): Promise<Claim | undefined> {
    const held: ReadyFile[] = [];
    const { decisions, routeGate } = this.#o;
    try {
      for (let file = decisions?.take(); file && !this.#o.stopping(); file = decisions?.take()) {
        const runId = /^([A-Za-z0-9_-]+)\.json$/.exec(file.name)?.[1];
        if (!runId) continue;
        if (routeGate?.mayResume && !(await routeGate.mayResume(runId))) {
          held.push(file);
          if (!this.#held.has(runId))
            this.#o.notice(runId, `run ${runId} was continued but waits for a route that is down; it resumes when it answers`);
          this.#held.add(runId);
          continue;
        }
        this.#held.delete(runId);
        try {
          const claim = await this.#o.claims.claimDecision(file, runId, (await this.#o.sourceOf?.(runId)) ?? `${runId}.json`);
          if (claim) return claim;
        } catch (error) {
          this.#o.notice(
            runId,
            `could not take the decision on run ${runId}: ${(error as Error).message}; it stays in .maestro/decisions/`,
          );
        }
      }
    } finally {
      for (const file of held) decisions?.putBack(file);
    }
    return undefined;
  }
}
