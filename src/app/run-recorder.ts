import { applyRunEvent, type RunEvent } from '../domain/run-machine.js';
import type { Clock, RunStore } from '../domain/ports.js';
import type { RunState } from '../domain/run-state.js';

/**
 * Holds a run's state and makes it durable: every change is a `RunEvent` applied by the domain's
 * one apply function, then recorded before `apply` resolves (a journal line where the store keeps
 * one, else the whole state). Records are chained in the order the events were applied, so steps
 * recorded at once (parallel calls) never overwrite each other: the last one holds every event.
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
    const before = this.#state;
    const at = this.clock.now().toISOString();
    const after = applyRunEvent(before, event, at);
    this.#state = after;
    const store = this.store;
    const write = store.record ? () => store.record!({ before, event, at, after }) : () => store.save(after);
    this.#saving = this.#saving.then(write);
    await this.#saving;
    return after;
  }
}
