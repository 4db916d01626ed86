import { RunNotResumableError } from '../app/process-command.js';
import type { DecisionAuthor } from '../domain/run-state.js';
import type { UseCases } from './use-cases.js';

/** Who takes a continued run up: a running watcher, one of the engine's workers, or the console itself. */
export type Resumer = 'watcher' | 'worker' | 'console';

/**
 * The runs the console carries on itself, because no watcher (or, with an engine, no worker) is
 * there to: a decider's `continue` then goes on without anyone at a terminal. One run at a time, in
 * the order they were continued, each resumed exactly as `maestro run --resume` resumes it (holding
 * the run, so a watcher started meanwhile cannot take it too). Stopping the console stops the run
 * going on at its last checkpoint; it is then shown interrupted, and can be resumed again.
 */
export class ConsoleCarrier {
  #chain: Promise<void> = Promise.resolve();
  readonly #waiting = new Set<string>();

  constructor(
    private readonly app: UseCases,
    private readonly options: { readonly signal: AbortSignal; readonly onProblem: (message: string) => void },
  ) {}

  /** Who resumes a run continued now: a live watcher or worker if there is one, else this console. */
  async resumer(): Promise<Resumer> {
    return (await this.app.taker()) ?? 'console';
  }

  /** Whether the run waits in this console's line to be carried on. */
  isWaiting(runId: string): boolean {
    return this.#waiting.has(runId);
  }

  /** Puts the run in line; it is resumed once the runs before it have paused or ended. */
  carry(runId: string, by?: DecisionAuthor): void {
    if (this.#waiting.has(runId)) return;
    this.#waiting.add(runId);
    this.#chain = this.#chain.then(async () => {
      try {
        if (!this.options.signal.aborted) await this.app.resume(runId, by);
      } catch (error) {
        // Another process took it up (a watcher started meanwhile): it goes on there. An interrupt is the console stopping.
        if (!(error instanceof RunNotResumableError) && !this.options.signal.aborted) {
          this.options.onProblem(`run ${runId} could not go on: ${error instanceof Error ? error.message : String(error)}`);
        }
      } finally {
        this.#waiting.delete(runId);
      }
    });
  }

  /** Resolves once the run carried on now has stopped (the console's signal stops it at a checkpoint). */
  settled(): Promise<void> {
    return this.#chain;
  }
}
