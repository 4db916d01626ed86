import { applyRunEvent, type RunEvent } from '../domain/run-machine.js';
import type { Clock, RunStore } from '../domain/ports.js';
import type { RunState } from '../domain/run-state.js';

/**
 * Holds a run's state and makes it durable: every change is a `RunEvent` applied by the domain's
 * one apply function, then saved before `apply` resolves. Saves are chained, so steps recorded at
 * once (parallel calls) never overwrite each other: the last save holds every event.
 */
export class RunRecorder {
  #state: RunState;
  #saving: Promise<void> = Promise.resolve();

  constructor(
    state: RunState,
    private readonly store: RunStore,
    private readonly clock: Clock,
  ) {
    this.#state = state;
  }

  get state(): RunState {
    return this.#state;
  }

  /** Applies the event and waits until the checkpoint that holds it is on disk. */
  async apply(event: RunEvent): Promise<RunState> {
    this.#state = applyRunEvent(this.#state, event, this.clock.now().toISOString());
    const snapshot = this.#state;
    this.#saving = this.#saving.then(() => this.store.save(snapshot));
    await this.#saving;
    return snapshot;
  }
}
