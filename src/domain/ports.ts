import type { AuditEvent } from './audit.js';
import type { LoopPolicyData } from './loop-policy/workspace-loop.js';
import type { PictureSpec } from './modes/mode.js';
import type { Persona } from './persona.js';
import type { Rejection } from './queue.js';
import type { ResolvedRoute } from './route.js';
import type { RunEvent } from './run-machine.js';
import type { KnowledgeResult, RunState } from './run-state.js';
import type { HistoryMessage, SessionState } from './session-state.js';

export type { CallContext, CallPurpose, ChatMessage, LlmNotice, LlmReply, LlmRequest, ModelIdentity } from './chat.js';
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
  /** Set when a corrupt file was moved aside and the persona starts fresh. */
  readonly recovered?: { movedTo: string; problem: string };
}

export interface SessionStore {
  load(personaId: string): Promise<SessionLoad>;
  /**
   * Adds one run's messages to a persona's memory (idempotent by run id), re-reading the file under
   * a lock so several watchers never drop each other's runs, and archiving the oldest runs beyond the
   * workspace's `history.keep_runs`.
   */
  appendRun(personaId: string, runId: string, messages: readonly HistoryMessage[]): Promise<void>;
}

/** One event applied to a run's state (by `applyRunEvent`, at `at`), as the recorder makes it durable. */
export interface RunChange {
  readonly before: RunState;
  readonly event: RunEvent;
  readonly at: string;
  readonly after: RunState;
}

export interface RunStore {
  /** Saves a whole state; durable when it resolves. */
  save(state: RunState): Promise<void>;
  load(runId: string): Promise<RunState | undefined>;
  /**
   * Makes one change durable when it resolves; `load` then returns `change.after`. Cheaper than
   * `save` where the store keeps a journal of events. Stores without it are given `save(after)`.
   */
  record?(change: RunChange): Promise<void>;
  /**
   * `record`, with audit records written ahead in the same durable write (one flush for both), then
   * appended to their log. Only where the store can carry them to that log (see AuditSink.appendAhead).
   */
  recordAhead?(change: RunChange, audit: AuditAhead): Promise<void>;
  /** This process stops executing the run (it ended, paused, or was interrupted): tidy what `record` kept open. */
  close?(runId: string): Promise<void>;
}

/** A run this process holds; `release` lets it go (a process that dies lets it go by dying). */
export interface RunHold {
  release(): Promise<void>;
}

/**
 * Which process executes a run now. A run is held from before its first checkpoint until this
 * process stops executing it; a checkpoint that says `running` with no live holder was interrupted.
 */
export interface RunHolds {
  /** Holds the run for this process; throws `RunHeldError` when a live process already holds it. */
  hold(runId: string): Promise<RunHold>;
}

/** Audit records a run store writes ahead with a change: their exact lines, chained after the log's end. */
export interface AuditAhead {
  /** The log they continue (the sink's `path`). */
  readonly log: string;
  readonly lines: readonly string[];
  /** The last of them: the log's head once they are written. */
  readonly last: { readonly seq: number; readonly hash: string };
  /** Bytes of whole lines in the log before them (a failed append is cut back to this). */
  readonly logBytes: number;
}

export interface AuditSink {
  /** Appends one record and flushes it before resolving. Returns the log's path. */
  append(event: AuditEvent): Promise<void>;
  /**
   * Appends records whose durability another write provides: their exact lines (sanitized, chained)
   * are handed to `persist`, which must make them durable and write them to the log before it
   * resolves (RunStore.recordAhead). Nothing else is appended in between.
   */
  appendAhead?(events: readonly AuditEvent[], persist: (ahead: AuditAhead) => Promise<void>): Promise<void>;
  /** Whether the log already holds a record of this event (written before this sink was opened, or by it). */
  hasRecorded?(event: string): boolean;
  /** The step ids the log's MODEL_CALL records name (written before this sink was opened, or by it). */
  recordedSteps?(): ReadonlySet<string>;
  readonly path: string;
}

export interface AuditLog {
  open(runId: string): Promise<AuditSink>;
}

/** Reads input artifacts through the same sandbox as READ_FILE. */
export interface InputReader {
  readFile(relativePath: string): Promise<Omit<KnowledgeResult, 'action' | 'argument'>>;
}

export type OutputPathCheck = { ok: true; absolute: string; relative: string } | { ok: false; reason: string };

export interface ArtifactWriter {
  /** Whether an artifact may be written at this workspace-relative path (never over a `protect`ed file: the command's inputs). */
  check(relativePath: string, protect?: readonly string[]): Promise<OutputPathCheck>;
  /** Writes atomically at a path that passed `check` (checked again); returns the absolute path. */
  write(relativePath: string, content: string, protect?: readonly string[]): Promise<string>;
}

export type { OnProgress, ProgressEvent } from './progress.js';

/** The workspace's loop policy (`.maestro/loop-policy.json`), updated under a lock. */
export interface LoopPolicyStore {
  read(): Promise<LoopPolicyData>;
  /** Applies `fn` to the current data and saves what it returns, atomically and exclusively. */
  update<T>(fn: (data: LoopPolicyData) => { data: LoopPolicyData; result: T }): Promise<T>;
}

/** Draws a picture for the artifact as SVG (the library is loaded only when one is drawn). */
export interface PictureRenderer {
  render(spec: PictureSpec): Promise<string>;
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
  /** Resolves when a run may have ended (a notification), or after `ms`. */
  waitForDone(ms: number): Promise<void>;
}

/**
 * One process at a time decides or resumes a run: the hold is exclusive across processes (and, with
 * an engine, machines), is kept while its holder lives however long it works, and lapses when the
 * holder dies.
 */
export interface RunLocks {
  /**
   * Runs `fn` holding run `runId`. While another live process holds it (after waiting up to
   * `waitMs`, default 0) this throws RunBusyError and runs nothing.
   */
  hold<T>(runId: string, fn: () => Promise<T>, options?: { readonly waitMs?: number }): Promise<T>;
}
