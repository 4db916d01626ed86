import type { Clock, OpenRun, RunCommit, RunFileName } from '../domain/ports.js';
import { resolveCommit, type ResolvedCommit } from '../domain/run/commit.js';
import type { RunState } from '../domain/run-state.js';

/** A run's state as its ledger read it when the run was opened: the state (or none), or why it could not be read. */
export type LoadedState = { readonly state: RunState | undefined } | { readonly unreadable: Error };

/**
 * What every ledger's open run shares: commits are resolved (domain/run/commit.ts) in the order
 * they are called, the state moves on at once, and the writes follow one another in that order —
 * parallel steps committing at once never overwrite each other. A write that fails leaves every
 * later commit failing with it (fail closed: nothing is written past a change that did not stick).
 * Subclasses write one resolved commit as their storage makes it durable.
 */
export abstract class LedgerRun implements OpenRun {
  #state: RunState | undefined;
  readonly #unreadable: Error | undefined;
  #writing: Promise<void> = Promise.resolve();

  protected constructor(
    readonly runId: string,
    loaded: LoadedState,
    private readonly clock: Clock,
  ) {
    this.#state = 'state' in loaded ? loaded.state : undefined;
    this.#unreadable = 'unreadable' in loaded ? loaded.unreadable : undefined;
  }

  get state(): RunState | undefined {
    if (this.#unreadable) throw this.#unreadable;
    return this.#state;
  }

  abstract readonly log: string;
  abstract hasRecorded(event: string): boolean;
  abstract recordedSteps(): ReadonlySet<string>;
  abstract filePath(name: RunFileName): string;
  abstract close(): Promise<void>;

  async commit(change: RunCommit): Promise<void> {
    // Resolved now, in call order (before any await), so concurrent commits chain their states.
    const changesState = change.start !== undefined || change.event !== undefined;
    if (changesState && this.#unreadable) throw this.#unreadable;
    const resolved = resolveCommit({
      runId: this.runId,
      state: this.#state,
      change,
      // The clock is read only for a change of state, which is stamped with it.
      at: changesState ? this.clock.now().toISOString() : (this.#state?.updated_at ?? ''),
      hasRecorded: (event) => this.hasRecorded(event),
    });
    this.#state = resolved.after;
    this.#writing = this.#writing.then(() => this.write(resolved));
    await this.#writing;
  }

  /** Makes one resolved commit durable, as this storage does. */
  protected abstract write(commit: ResolvedCommit): Promise<void>;
}
