/**
 * The command queue behind `maestro watch`: its states, the events it reports, and the two ports
 * the watch loop drives (the inbox that finds command files, the claim store that owns them).
 */
import type { ProgressEvent } from './progress.js';
import type { OutcomeStatus, RunOutcome } from './run-machine.js';
import type { RunStatus } from './run-state.js';

/**
 * Which names in `commands/` are commands: `*.json`, not hidden. This leaves out dotfiles, editor
 * swap, backup and lock files (`.x.swp`, `x.json~`, `.#x.json`, `#x.json#`, vim's `4913`) and the
 * temporary names of writers that write then rename (`x.json.tmp`, write-file-atomic's `x.json.123`).
 * A name in another case (`Task.JSON`) or of another kind (`task.yaml`) is not a command either:
 * `maestro validate` says so.
 */
export function isCommandFileName(name: string): boolean {
  return name.endsWith('.json') && !name.startsWith('.') && name.length > '.json'.length;
}

/** The watcher's state machine: AWAITING_COMMAND → EXECUTING_TASK → PRODUCING_ARTIFACT → AWAITING_COMMAND. */
export const WATCH_STATES = ['AWAITING_COMMAND', 'EXECUTING_TASK', 'PRODUCING_ARTIFACT', 'STOPPED'] as const;
export type WatchState = (typeof WATCH_STATES)[number];

const ALLOWED: Record<WatchState, readonly WatchState[]> = {
  AWAITING_COMMAND: ['EXECUTING_TASK', 'STOPPED'],
  EXECUTING_TASK: ['PRODUCING_ARTIFACT', 'AWAITING_COMMAND', 'STOPPED'],
  PRODUCING_ARTIFACT: ['AWAITING_COMMAND', 'STOPPED'],
  STOPPED: [],
};

/** Whether the state machine may go from `from` to `to` (staying put is not a transition). */
export function isAllowedTransition(from: WatchState, to: WatchState): boolean {
  return ALLOWED[from].includes(to);
}

/** A command's place in the engine's queue (`maestro_queue.state`). */
export type QueueState = 'queued' | 'running' | 'paused' | 'done' | 'rejected';

/**
 * Where a run's queue row goes when its checkpoint says it has paused or ended: the one table, used
 * by the checkpoint's own transaction and by a claim settled after it. A running run stays where it is.
 */
export const QUEUE_STATE_OF: Readonly<Record<RunStatus, QueueState | undefined>> = {
  running: undefined,
  paused: 'paused',
  completed: 'done',
  stopped: 'done',
  guardrail_stopped: 'done',
  invalid: 'rejected',
  error: 'rejected',
};

/** A command file in `commands/` that is ready to be claimed (whole, or stable long enough to be judged). */
export interface ReadyFile {
  /** The file name inside `commands/` (never a path: subfolders are ignored). */
  readonly name: string;
  readonly mtimeMs: number;
}

/** Oldest first: modification time, then name; the order the queue takes files in. */
export function compareReadyFiles(a: ReadyFile, b: ReadyFile): number {
  return a.mtimeMs - b.mtimeMs || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/** A command this watcher owns in `.maestro/inflight/<run_id>.json`. */
export interface Claim {
  readonly runId: string;
  /** The command's original file name in `commands/` (for messages, rejected/ and the audit trail). */
  readonly source: string;
  /** When it was claimed (ISO time). */
  readonly claimedAt: string;
  /** True when it was taken over from a watcher that died (crash recovery). */
  readonly recovered: boolean;
  /**
   * `decision`: a paused run a person chose to continue (`maestro hitl decide … continue`); the
   * claimed file is the decision, the command itself is kept with the run.
   */
  readonly kind?: 'command' | 'decision';
}

/** Why a claimed command goes to `.maestro/rejected/` instead of being deleted. */
export interface Rejection {
  readonly status: 'invalid' | 'error';
  readonly reason_code: string;
  readonly message: string;
  /** Each problem as `path: message`. */
  readonly issues: readonly string[];
  readonly audit_log: string | null;
}

/** Finds command files and tells the loop when one is ready. Adapter: `FsCommandInbox` (a watch on the folder). */
export interface CommandInbox {
  /** Starts watching; resolves once the start-up scan of files already there is done. */
  start(onReady: () => void): Promise<void>;
  /** The oldest ready file, removed from the ready set; undefined when none is ready. */
  take(): ReadyFile | undefined;
  /** Gives a taken file back to the ready set, untouched (it waits for a route that is down). */
  putBack(file: ReadyFile): void;
  /** Files seen but not ready yet (still being written, or being checked). */
  readonly pending: number;
  /** Files ready to be claimed. */
  readonly ready: number;
  close(): Promise<void>;
}

/** Where a queue runner's claims come from: files (`FileClaims`) or an engine (a worker's session). */
export interface ClaimSource<C extends Claim = Claim> {
  /** The next claim this process wins; undefined when none is ready. */
  claimNext(): Promise<C | undefined>;
}

/** Owns claimed commands in `.maestro/inflight/`. Adapter: `FsClaimStore`. */
export interface ClaimStore {
  /** Claims `commands/<name>` under `runId` by an atomic rename; undefined when another watcher was first. */
  claim(file: ReadyFile, runId: string): Promise<Claim | undefined>;
  /**
   * Claims the `continue` decision `.maestro/decisions/<run_id>.json` by the same atomic rename,
   * so a watcher and a foreground `maestro run --resume` never both resume the run.
   */
  claimDecision(file: ReadyFile, runId: string, source: string): Promise<Claim | undefined>;
  /** Takes over every claim whose owning watcher is gone; each is returned to exactly one watcher. */
  recoverOrphans(): Promise<{ recovered: Claim[]; ownedByOthers: number }>;
  /** The claimed command's text, exactly as written. */
  read(claim: Claim): Promise<string>;
  /** The run has ended (or its command is kept with the run): the claim and its file go. */
  release(claim: Claim): Promise<void>;
  /**
   * Moves the command to `.maestro/rejected/` with `<name>.error.json`; returns the new path (null
   * if it was gone, or for a decision: the command is kept with the run, and the decision is spent).
   * `as` names the file there (`engineRejectedName`); without it, its own name, or with the run id
   * when that name is taken.
   */
  reject(claim: Claim, rejection: Rejection, options?: { readonly as?: string }): Promise<string | null>;
  /**
   * Counts one more failure of this claim that could not even be recorded with its run (kept beside
   * the claim, so it survives restarts); returns every reason so far, oldest first.
   */
  recordFailure(claim: Claim, reason: string): Promise<string[]>;
}

/** A claim that fails this many times in a row, without its failure being recorded, is rejected. */
export const POISON_CLAIM_FAILURES = 3;

/** What the watcher reports: one event per state transition, plus notices that change no state. */
export type WatchEvent =
  | {
      kind: 'started';
      state: 'AWAITING_COMMAND';
      pid: number;
      workspace: string;
      once: boolean;
      recovered: number;
      owned_by_others: number;
    }
  | {
      kind: 'claimed';
      state: 'EXECUTING_TASK';
      from: WatchState;
      run_id: string;
      source: string;
      resume: 'new' | 'checkpoint' | 'start' | 'decision' | 'outage';
    }
  | { kind: 'step'; state: 'EXECUTING_TASK'; run_id: string; step: string; persona: string; round: number; rounds: number }
  | { kind: 'producing_artifact'; state: 'PRODUCING_ARTIFACT'; from: WatchState; run_id: string; path: string }
  | {
      kind: 'finished';
      state: 'AWAITING_COMMAND';
      from: WatchState;
      run_id: string;
      source: string;
      status: OutcomeStatus;
      decision: string | null;
      reason_code: string;
      artifact: string | null;
      audit_log: string | null;
      rejected_to: string | null;
      message: string;
      queued: number;
    }
  | { kind: 'notice'; run_id: string | null; message: string }
  | {
      kind: 'stopped';
      state: 'STOPPED';
      from: WatchState;
      reason: 'signal' | 'once';
      /** Commands the watcher left in `commands/` (a route down, a broken workspace); absent where not known (a worker). */
      left?: number;
    };

/**
 * What a watcher (or a worker) shows of the progress of the run it executes: a step starting, the
 * artifact being written (a state transition, from `from`), a notice. Nothing for the rest.
 */
export function runProgressEvent(
  event: ProgressEvent,
  from: WatchState,
): Extract<WatchEvent, { kind: 'step' | 'producing_artifact' | 'notice' }> | undefined {
  if (event.kind === 'step_started')
    return {
      kind: 'step',
      state: 'EXECUTING_TASK',
      run_id: event.run_id,
      step: event.step,
      persona: event.persona,
      round: event.round,
      rounds: event.rounds,
    };
  if (event.kind === 'classifying')
    return { kind: 'step', state: 'EXECUTING_TASK', run_id: event.run_id, step: 'classify', persona: 'mediator', round: 0, rounds: 0 };
  if (event.kind === 'producing_artifact')
    return { kind: 'producing_artifact', state: 'PRODUCING_ARTIFACT', from, run_id: event.run_id, path: event.path };
  if (event.kind === 'notice') return { kind: 'notice', run_id: event.run_id, message: event.message };
  return undefined;
}

/** The `started` event of a loop: who it is, and what it found left in flight. */
export function startedEvent(
  loop: { readonly pid: number; readonly workspace: string; readonly once: boolean },
  recovered = 0,
  ownedByOthers = 0,
): Extract<WatchEvent, { kind: 'started' }> {
  const { pid, workspace, once } = loop;
  return { kind: 'started', state: 'AWAITING_COMMAND', pid, workspace, once, recovered, owned_by_others: ownedByOthers };
}

/** How a claimed command ended: its run's outcome (buildOutcome), and where its file went (`rejected/`, or nowhere: released). */
/**
 * The name in `.maestro/rejected/` of a command the engine rejected: with its run id, so a worker on
 * another machine can say exactly where the intake moves it, whatever rejected/ already holds.
 */
export function engineRejectedName(source: string, runId: string): string {
  const name = source.split(/[\\/]/).pop() ?? source;
  return `${name.replace(/\.json$/i, '')}.${runId}.json`;
}

export type ClaimOutcome = RunOutcome & { readonly source: string; readonly rejected_to: string | null };

/**
 * The `finished` event of a claim: its outcome as every loop reports it (no decision or log is `null`;
 * an interrupted run has decided nothing: it goes on from its checkpoint).
 */
export function finishedEvent(outcome: ClaimOutcome, from: WatchState, queued: number): Extract<WatchEvent, { kind: 'finished' }> {
  const { run_id, source, status, reason_code, artifact, rejected_to, message } = outcome;
  const shown = { run_id, source, status, reason_code, artifact, rejected_to, message };
  return {
    kind: 'finished',
    state: 'AWAITING_COMMAND',
    from,
    ...shown,
    decision: (outcome.status !== 'interrupted' && outcome.decision) || null,
    audit_log: outcome.audit_log || null,
    queued,
  };
}
