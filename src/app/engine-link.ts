import { AppError } from '../domain/errors.js';

/** An error that says the engine cannot be reached now (the adapters' EngineError), as opposed to one about a single command. */
export function isEngineOutage(error: unknown): boolean {
  return error instanceof AppError && error.code === 'ENGINE_UNAVAILABLE';
}

/** An outage that may end by itself (a refused or broken connection), as opposed to an engine that cannot be used as it is (its schema). */
export function isTransientOutage(error: unknown): boolean {
  return isEngineOutage(error) && (error as { transient?: unknown }).transient === true;
}

export interface EngineLinkOptions {
  /** One line for the operator. */
  readonly notice: (message: string) => void;
  /** What waits meanwhile, for the "lost" line ("commands wait in .maestro/inflight/"). */
  readonly meanwhile: string;
  /** The pause between tries while the engine is up (a poll), and the first one after it went away. */
  readonly baseMs: number;
  /** The longest pause between tries while it stays away. */
  readonly maxMs: number;
  readonly now?: () => number;
}

/**
 * Whether a long-running process (the intake, a worker) can reach its engine, said once each way:
 * one line when the connection is lost, one when it is back, however many tries and waiting
 * commands there are in between. While it is away, the pause between tries doubles up to `maxMs`.
 */
export class EngineLink {
  readonly #o: EngineLinkOptions;
  #down: { since: number; failures: number } | undefined;

  constructor(options: EngineLinkOptions) {
    this.#o = options;
  }

  get down(): boolean {
    return this.#down !== undefined;
  }

  /** A try failed because the engine is away: the first failure says so. */
  lost(error: unknown): void {
    if (this.#down) {
      this.#down.failures += 1;
      return;
    }
    this.#down = { since: this.#now(), failures: 1 };
    const why = error instanceof Error ? error.message : String(error);
    this.#o.notice(
      `the connection to the engine is lost (${why}); ${this.#o.meanwhile}; retrying with a growing pause (up to ${Math.round(this.#o.maxMs / 1000)} s)`,
    );
  }

  /** A try succeeded: if the engine was away, says it is back (once); true then. */
  reached(): boolean {
    const down = this.#down;
    if (!down) return false;
    this.#down = undefined;
    const seconds = Math.max(0, Math.round((this.#now() - down.since) / 1000));
    this.#o.notice(
      `the connection to the engine is back (after ${seconds} s, ${down.failures} failed tr${down.failures === 1 ? 'y' : 'ies'})`,
    );
    return true;
  }

  /** The pause before the next try: `baseMs` while up, then doubling per failure up to `maxMs`. */
  pause(): number {
    if (!this.#down) return this.#o.baseMs;
    return Math.min(this.#o.maxMs, this.#o.baseMs * 2 ** Math.min(this.#down.failures - 1, 20));
  }

  #now(): number {
    return (this.#o.now ?? Date.now)();
  }
}
