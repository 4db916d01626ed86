import type { RunListing } from '../adapters/fs/run-catalog.js';
import type { QueueStats } from '../adapters/pg/queue-reads.js';
import type { DecideDeps, DecisionInbox } from '../app/hitl.js';
import type { RunDeps, RunOutcome } from '../app/run-deps.js';
import type { DurabilityVerdict } from '../domain/engine-durability.js';
import type { RunState } from '../domain/run-state.js';

/**
 * What differs between a workspace on files and one with an engine (PostgreSQL), chosen once per
 * app: the use cases ask here, and never branch on the back end themselves.
 */
export interface Backend {
  /** Who takes a continued run up: a running watcher (files), or a free worker of the engine. */
  readonly continuedBy: 'watcher' | 'worker';
  /**
   * Whether the run is shown as running (every view asks this): a live process holds it or a watcher's
   * claim owns it (files); a live worker's lease has it or it is queued for one (engine).
   */
  isHeld(runId: string): Promise<boolean>;
  /** Whether a person's `continue` waits for the run with nobody to take it yet (files; an engine queues it, held). */
  isContinued?(runId: string): Promise<boolean>;
  /** Whether the engine's queue hands the run (interrupted) to the next free worker; absent on files. */
  isRequeued?(runId: string): Promise<boolean>;
  /** Whether the queue has the run for a live taker: a watcher's claim (files), a worker's lease (engine). */
  isClaimed(runId: string): Promise<boolean>;
  /** Whether a watcher (files) or a worker (engine) is alive to take a continued run up. */
  hasTaker(): Promise<boolean>;
  /** The deps a decision on this run writes with: with an engine, a stop's artifact is kept there for the intake. */
  depsForRun(runId: string): DecideDeps;
  /** `run --resume` once this process holds the run: `deps` hold nothing more. */
  resumeHeld(runId: string, deps: ResumeDeps): Promise<RunOutcome>;
  /** A new council session: every persona's memory archived; what was done, for people (undefined when there was none). */
  archiveMemory(sessionId: string): Promise<string | undefined>;
  /** Whether the commits an intake or a worker makes are durable (always on files). */
  durability(allowAsync: boolean): Promise<DurabilityVerdict>;
  /**
   * The runs the ledger does not hold, but those of `known`: those only an audit log knows (a command
   * that was invalid, a run that died before its first checkpoint) and, with an engine, the workspace's
   * runs on files from before it.
   */
  runsBeside(known: ReadonlySet<string>): Promise<RunListing[]>;
  /** A run the ledger does not hold that `runsBeside` lists with its checkpoint (a run on files from before the engine). */
  readBeside(runId: string): Promise<RunState | undefined>;
  /** The engine's queue counts; undefined on files (their queue is `commands/`). */
  queueStats(): Promise<QueueStats | undefined>;
  /** Lets go of the engine (nothing to do on files). */
  close(): Promise<void>;
}

/** The app's deps for a run this process holds already: the run is not held again inside. */
export type ResumeDeps = Omit<RunDeps, 'holds'> & { readonly decisions: DecisionInbox };
