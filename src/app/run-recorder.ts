import type { AuditEvent } from '../domain/audit.js';
import { InternalError } from '../domain/errors.js';
import { applyRunEvent, type RunEvent } from '../domain/run-machine.js';
import type { AuditSink, Clock, RunStore } from '../domain/ports.js';
import type { RunState } from '../domain/run-state.js';

/**
 * Holds a run's state and makes it durable: every change is a `RunEvent` applied by the domain's
 * one apply function, then recorded before `apply` resolves (a journal line where the store keeps
 * one, else the whole state). Records are chained in the order the events were applied, so steps
 * recorded at once (parallel calls) never overwrite each other: the last one holds every event.
 *
 * A change may come with the audit records it causes (a step's MODEL_CALL, the gates of a plan).
 * Where the store and the audit sink can, both go in one durable write (the journal carries the
 * records ahead of the log: one flush); elsewhere the change is recorded first, then the records,
 * so the log never names a step the checkpoint lacks.
 */
export class RunRecorder {
  #state: RunState;
  #saving: Promise<void> = Promise.resolve();

  constructor(
    state: RunState,
    private readonly store: RunStore,
    private readonly clock: Clock,
    private readonly audit?: AuditSink,
  ) {
    this.#state = state;
  }

  get state(): RunState {
    return this.#state;
  }

  /**
   * Applies the event and waits until the checkpoint that holds it is on disk, and with it the
   * audit records `records` makes of the new state.
   */
  async apply(event: RunEvent, records?: (after: RunState) => readonly AuditEvent[]): Promise<RunState> {
    const before = this.#state;
    const at = this.clock.now().toISOString();
    const after = applyRunEvent(before, event, at);
    const { store, audit } = this;
    if (records && !audit) throw new InternalError('a run change came with audit records, but the recorder has no audit log');
    // The records are made before the state moves on: if making them throws, nothing changed.
    const events = records?.(after);
    this.#state = after;
    const change = { before, event, at, after };
    const save = store.record ? () => store.record!(change) : () => store.save(after);
    let write = save;
    if (events && audit) {
      write =
        audit.appendAhead && store.recordAhead
          ? () => audit.appendAhead!(events, (ahead) => store.recordAhead!(change, ahead))
          : async () => {
              await save();
              for (const e of events) await audit.append(e);
            };
    }
    this.#saving = this.#saving.then(write);
    await this.#saving;
    return after;
  }
}
