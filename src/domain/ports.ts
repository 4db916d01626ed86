import type { ArtifactPlacement } from './artifact-place.js';
import type { AuditEvent } from './audit.js';
import type { LoopPolicyData } from './loop-policy/workspace-loop.js';
import type { Persona } from './persona.js';
import type { Rejection } from './queue.js';
import type { ResolvedRoute } from './route.js';
import type { RunEvent } from './run-machine.js';
import type { KnowledgeResult, RunState } from './run-state.js';
import type { Passage } from './memory/passages.js';
import type { RunMemory, SessionState } from './session-state.js';

export type { CallContext, CallPurpose, ChatMessage, LlmNotice, LlmReply, LlmRequest, ModelIdentity, RouteWait } from './chat.js';
import type { CallContext, LlmReply, LlmRequest } from './chat.js';

/** The one interface every model sits behind. */
export interface LlmClient {
  /** Label for artifacts and summaries (e.g. `offline (rehearsal)`). */
  readonly label: string;
  /** True when replies are not a real model's (the offline rehearsal model). */
  readonly rehearsal: boolean;
  complete(request: LlmRequest, call: CallContext, signal?: AbortSignal): Promise<LlmReply>;
}

export interface Clock {
  now(): Date;
}

/** Serves knowledge requests from the sandboxed knowledge roots. Never throws for a refusal. */
export interface KnowledgeBase {
  fulfil(request: { action: string; argument: string }, persona: Pick<Persona, 'id' | 'privileges'>): Promise<KnowledgeResult>;
}

export interface PersonaLoad {
  readonly personas: Persona[];
  readonly problems: { file: string; issues: string[] }[];
}

export interface PersonaStore {
  loadAll(): Promise<PersonaLoad>;
}

export interface SessionLoad {
  readonly state: SessionState;
  /** Set when a corrupt file was moved aside and the persona starts fresh (`corruptSessionNotice` says so). */
  readonly recovered?: { movedTo: string; problem: string };
  /** Set instead when the load only looked (`leaveCorrupt`): the corrupt file is where it was (`corruptSessionNotice` says so). */
  readonly corrupt?: { file: string; problem: string };
}

/** How a persona's memory is loaded: a read-only look (`maestro session show`) leaves a corrupt file where it is. */
export interface SessionLoadOptions {
  readonly leaveCorrupt?: boolean;
}

export interface SessionStore {
  /** A persona's memory now: every run whose save has landed. */
  load(personaId: string, options?: SessionLoadOptions): Promise<SessionLoad>;
  /**
   * Adds one run (its task's summary and its passages) to a persona's memory (idempotent by run id),
   * re-reading the file under a lock so several watchers never drop each other's runs, counting the
   * memory's tokens once it passes `history.max_tokens`, and archiving the passages of the oldest runs
   * beyond the workspace's `history.keep_runs`. Returns what a corrupt file moved aside meanwhile
   * was (the persona's memory then holds this run alone), for the caller to report.
   */
  appendRun(personaId: string, runId: string, memory: RunMemory, options?: AppendRunOptions): Promise<SessionLoad['recovered']>;
  /**
   * The persona's archived passages (since its memory was last reset) whose text holds one of `terms`
   * (lower case), the newest `limit` of them, oldest first: what recall ranks beside the session's.
   */
  recallArchive(personaId: string, terms: readonly string[], limit: number): Promise<Passage[]>;
  /**
   * Changes a persona's memory in place, under the same lock as `appendRun`, from what is there now
   * (a person's confirmed outcome joins its record this way). `change` is pure: it may run again on a
   * fresher state. Returns what a corrupt file moved aside meanwhile was, for the caller to report.
   */
  update(personaId: string, change: (state: SessionState) => SessionState): Promise<SessionLoad['recovered']>;
}

export interface AppendRunOptions {
  /**
   * This run's memory may have been saved before (an ending completed after a crash): its run id is
   * looked for in the whole archive, not only in the state file and its recent summaries, since other
   * runs may have moved it there meanwhile. Only a retry pays for that look.
   */
  readonly retry?: boolean;
}

/**
 * A run's own files, kept beside its checkpoint: the command's copy (`command.json`, while the run
 * has not ended), and while it is paused why (`hitl.json`) and the artifact so far (`draft.md`), and
 * from its arbitration on the machine-readable orchestration result (`orchestration.json`); a paused
 * draft's heat map (`draft.heatmap.svg`) beside it; from a stop's ending being fixed to its end, what
 * its artifact is made of (`stop-artifact.json`), so that a stop completed after a crash writes it.
 */
export const RUN_FILES = [
  'command.json',
  'hitl.json',
  'draft.md',
  'orchestration.json',
  'draft.heatmap.svg',
  'stop-artifact.json',
] as const;
export type RunFileName = (typeof RUN_FILES)[number];

export interface RunFile {
  readonly name: RunFileName;
  /** The whole text, written whole (a file is replaced, never appended to). */
  readonly content: string;
}

/**
 * One durable unit of a run: a change of its state, the audit records that change causes and the
 * run's files, made durable together — or, where the storage cannot do that in one write, in an
 * order that leaves the run consistent after a crash at any point (see the ledger's adapters). The
 * rules every ledger applies to a commit are `resolveCommit`'s (domain/run/commit.ts).
 */
export interface RunCommit {
  /** The run's first state (a command accepted). Only on a run that has no state yet. */
  readonly start?: RunState;
  /** A change of the run's state, applied by `applyRunEvent`; needs a state (the run's, or `start`). */
  readonly event?: RunEvent;
  /**
   * The audit records, in order. As a function they are made from the state after the change,
   * before anything is written: if making them throws, nothing changed.
   */
  readonly records?: readonly AuditEvent[] | ((after: RunState) => readonly AuditEvent[]);
  /** Run files written whole with the change: in place before the state names them. */
  readonly files?: readonly RunFile[];
  /** Run files removed with the change: only once the change is durable (a crash leaves one the state no longer needs, never takes one it needs). */
  readonly removeFiles?: readonly RunFileName[];
  /**
   * The change completes an ending begun before a restart: of its records, those whose event the
   * log already holds were written then, and are not written again.
   */
  readonly completesEnding?: boolean;
}

/**
 * A run opened by this process to execute, settle or decide it: its state as committed so far, what
 * its audit log already holds, and `commit`, the only way its state, records and files change.
 * Commits are made durable in the order they are called (parallel steps may commit at once), and the
 * state moves on when `commit` is called: a commit that fails leaves every later one failing too.
 */
export interface OpenRun<S extends RunState | undefined = RunState | undefined> {
  /** The run's id (a plain name: it names the run's files). */
  readonly runId: string;
  /**
   * The run's state as committed so far; undefined while it has none (a command not accepted yet).
   * Throws the StorageError when its checkpoint could not be read: records can still be committed.
   */
  readonly state: S;
  /** Where the run's audit log is, for people: a path, or `engine:audit/<run_id>`. */
  readonly log: string;
  /** Whether the log holds a record of this event (written before the run was opened, or since). */
  hasRecorded(event: string): boolean;
  /** The step ids the log's MODEL_CALL records name (written before the run was opened, or since). */
  recordedSteps(): ReadonlySet<string>;
  /** Where a run file is kept, for people (`hitl.json` names the draft this way). */
  filePath(name: RunFileName): string;
  /** Makes one change durable (see RunCommit); resolves once it is. */
  commit(change: RunCommit): Promise<void>;
  /** This process stops executing the run (it ended, paused, or was interrupted): tidy what commits kept open. */
  close(): Promise<void>;
}

/** A run that has a state: one being executed, paused or ended. */
export type StartedRun = OpenRun<RunState>;

/** What people and the CLI read of runs; nothing here writes. */
export interface RunReader {
  /** A run's state, or undefined when there is no such run (or its id is not a plain name). Throws a StorageError for a damaged checkpoint. */
  load(runId: string): Promise<RunState | undefined>;
  /** Every run id with a state, sorted (ids sort by time). */
  list(): Promise<string[]>;
  /** A run file's text, or undefined when the run has none. */
  readFile(runId: string, name: RunFileName): Promise<string | undefined>;
}

/**
 * Every run's state, audit log and files, as one durable port: a run is opened, then changed only
 * by commits. Adapters: files (`FsRunLedger`: the checkpoint journal as the audit log's write-ahead
 * log) and PostgreSQL (`PgRunLedger`: one transaction per commit).
 */
export interface RunLedger extends RunReader {
  /**
   * Opens a run: a run id that is not a plain name, or an audit log that is damaged, is refused
   * (StorageError); a new run id opens an empty run.
   */
  open(runId: string): Promise<OpenRun>;
}

/** A run this process holds; `release` lets it go (a process that dies lets it go by dying). */
export interface RunHold {
  release(): Promise<void>;
}

/**
 * Which process works on a run now: the one that executes it (from before its first checkpoint
 * until it stops), resumes it, or decides its pause. One at a time, across processes (and, with an
 * engine, machines); a hold lapses when its holder dies, with nothing to refresh. A checkpoint that
 * says `running` with no live holder was interrupted.
 */
export interface RunHolds {
  /**
   * Holds the run for this process. While another live process holds it (after waiting up to
   * `waitMs`, default 0) this throws `RunHeldError`, and holds nothing. `span`: how long this hold
   * lasts, `moment` (a decision, a record: the default) or `run` (executing or resuming it). A hold
   * for a run does not wait for another process's hold for a run (it would last as long as that run);
   * a moment's waits for either (a run about to pause lets go in moments).
   */
  hold(runId: string, options?: { readonly waitMs?: number; readonly span?: HoldSpan }): Promise<RunHold>;
}

/** How long a run's hold lasts: a moment (a decision, a record), or the whole run. */
export type HoldSpan = 'moment' | 'run';

/** Reads input artifacts through the same sandbox as READ_FILE. */
export interface InputReader {
  readFile(relativePath: string): Promise<Omit<KnowledgeResult, 'action' | 'argument'>>;
}

export type OutputPathCheck = { ok: true; absolute: string; relative: string } | { ok: false; reason: string };

export interface ArtifactWriter {
  /** Whether an artifact may be written at this workspace-relative path (never over a `protect`ed file: the command's inputs). */
  check(relativePath: string, protect?: readonly string[]): Promise<OutputPathCheck>;
  /**
   * Where run `runId`'s artifact goes (artifact-place.ts): `relativePath` when it is free or holds
   * this run's own artifact, else `<stem>-<runId><ext>` beside it. `suffixes`: the pictures written
   * beside the artifact (`.heatmap.svg`), which must be free too.
   */
  place(relativePath: string, runId: string, suffixes?: readonly string[]): Promise<ArtifactPlacement>;
  /** Writes atomically and durably at a path that passed `check` (checked again); returns the absolute path. */
  write(relativePath: string, content: string, protect?: readonly string[]): Promise<string>;
}

export type { OnProgress, ProgressEvent } from './progress.js';

/** The workspace's loop policy (`.maestro/loop-policy.json`), updated under a lock. */
export interface LoopPolicyStore {
  read(): Promise<LoopPolicyData>;
  /**
   * Applies `fn` to the current data and saves what it returns, atomically and exclusively. Corrupt
   * data is a StorageError, kept as it is, unless `replaceCorrupt` (the explicit new session start).
   */
  update<T>(fn: (data: LoopPolicyData) => { data: LoopPolicyData; result: T }, options?: { replaceCorrupt?: boolean }): Promise<T>;
}

/** Chooses clients by route: what `compose.ts` wires from the workspace config and the flags. */
export interface ModelRoutes {
  /** The route a persona uses unless a REROUTE moved it (flags first, then persona, then the default). */
  routeIdFor(persona: { route?: string | undefined }): string;
  resolve(id: string): ResolvedRoute | { error: string };
  clientFor(route: ResolvedRoute): LlmClient;
}

/** Where `continue` decisions wait for whoever resumes the run (a watcher, or `--run` in the foreground). */
export interface DecisionInbox {
  post(runId: string, decision: { pause_id: string; decided_at: string }): Promise<void>;
  /** Takes the decision for this run; false if there is none or another process took it first. */
  claim(runId: string): Promise<boolean>;
  /** Runs with a posted, unclaimed decision, oldest first. */
  pending(): Promise<string[]>;
}

/** A queue row that has ended, paused or been rejected, waiting to be written back to the workspace. */
export interface Delivery {
  readonly runId: string;
  readonly source: string;
  readonly state: 'paused' | 'done' | 'rejected';
  readonly kind: 'command' | 'decision';
  readonly rejection: Rejection | null;
  readonly status: string | null;
  readonly summary: string | null;
  readonly decision: string | null;
  readonly reasonCode: string | null;
}

/** The engine's queue as one workspace's intake sees it. */
export interface IntakeQueue {
  /** Idempotent by run id: true when the command is new to the engine. */
  submit(command: { runId: string; source: string; body: string; inputHashes: Readonly<Record<string, string>> }): Promise<boolean>;
  /** This workspace's rows that ended, paused or were rejected and are not written back yet, oldest first. */
  undelivered(): Promise<Delivery[]>;
  markDelivered(runId: string, state: string): Promise<void>;
  artifacts(runId: string): Promise<{ path: string; content: string; protect: string[] }[]>;
  /** This workspace's commands not written back yet (queued, running, or ended and undelivered). */
  outstanding(): Promise<number>;
  /** Calls `wake` whenever a run may have ended (a notification); called at every look, it listens again after an outage. */
  onDone(wake: () => void): void;
  /** Which of these run ids the engine has (any state): a claim it lacks was lost after it was accepted. */
  known(runIds: readonly string[]): Promise<ReadonlySet<string>>;
}
