import type { AuditEvent } from './audit.js';
import type { LoopPolicyData } from './loop-policy/workspace-loop.js';
import type { PictureSpec } from './modes/mode.js';
import type { Persona } from './persona.js';
import type { JsonMode } from './route.js';
import type { RunEvent } from './run-machine.js';
import type { KnowledgeResult, RunState } from './run-state.js';
import type { HistoryMessage, SessionState } from './session-state.js';

/** A chat message as our own type; SDK types never leave their adapter. */
export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/**
 * What a model is asked: the messages, and how the answer must be shaped. It knows nothing of its
 * caller (persona, step, purpose): that travels beside it as a `CallContext`.
 */
export interface LlmRequest {
  readonly messages: readonly ChatMessage[];
  /** The reply must be one JSON object with this JSON Schema (asked the way the endpoint supports: `json_mode`). */
  readonly responseFormat?: { readonly name: string; readonly schema: Record<string, unknown> };
  /** Upper bound on the reply's tokens, when the caller needs one (the route's own limit applies too). */
  readonly maxOutputTokens?: number;
}

/** What a call is for. */
export type CallPurpose = 'turn' | 'verdict' | 'synthesis' | 'plan' | 'classify' | 'assessment' | 'review' | 'decision' | 'item';

/**
 * Who asks, beside the request: routing (the persona's route), cassettes, the offline script,
 * progress and traces use it; no endpoint ever sees it.
 */
export interface CallContext {
  readonly persona: string;
  readonly purpose: CallPurpose;
  /** The stable id of the run step this call serves (e.g. `turn:r1:auditor`). */
  readonly step: string;
  readonly round: number;
  /** Text as it streams in (streaming routes); called with each new piece. */
  readonly onText?: (delta: string) => void;
}

/** Something a call did that belongs on the record (category-level, no content). */
export type LlmNotice = { readonly kind: 'json_mode_fallback'; readonly route: string; readonly from: JsonMode; readonly to: JsonMode; readonly status: number };

/** Which model answered: structured, so nobody guesses a rehearsal from a name. */
export interface ModelIdentity {
  /** `offline` (the embedded rehearsal), `openai` (an OpenAI-compatible endpoint), or what a test or cassette says. */
  readonly provider: string;
  readonly model: string;
  /** The route that served the call, when routes are in use. */
  readonly route?: string;
  /** True when the reply is not a real model's (the offline rehearsal). */
  readonly rehearsal: boolean;
}

export interface LlmReply {
  readonly content: string;
  /** Route/model that produced it, as shown in artifacts (`route/model`). */
  readonly model: string;
  readonly identity: ModelIdentity;
  readonly usage?: { prompt_tokens: number; completion_tokens: number };
  readonly notices?: readonly LlmNotice[];
  /** `length` when the reply was cut at the token limit. */
  readonly finishReason?: 'stop' | 'length' | 'other';
}

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

/**
 * A run's own files, kept beside its checkpoint: the command's copy (`command.json`, while the run
 * has not ended), and while it is paused why (`hitl.json`) and the artifact so far (`draft.md`).
 */
export const RUN_FILES = ['command.json', 'hitl.json', 'draft.md'] as const;
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

/**
 * What happens in a run as it happens, for people watching (the spinner, plain lines, `--follow`)
 * and scripts (`--follow --json`). Text here is what the council keeps (replies already screened), but for `text`.
 */
export type ProgressEvent =
  | { kind: 'run_started'; run_id: string; personas: string[]; rounds: number; mode?: string }
  | { kind: 'step_started'; run_id: string; step: string; step_id?: string; persona: string; round: number; rounds: number }
  /** A piece of a reply as it streams in, NOT screened yet: never kept or logged, shown only through a LiveScreen (live-screen.ts). */
  | { kind: 'text'; run_id: string; step_id: string; persona: string; delta: string }
  | { kind: 'step_finished'; run_id: string; step: string; step_id: string; persona: string; reply: string; model: string; duration_ms: number }
  /** A knowledge request in a reply (its argument as the screened reply holds it) and its outcome. */
  | { kind: 'knowledge'; run_id: string; step_id: string; persona: string; action: string; argument: string; status: string; reason_code: string; path?: string; message?: string }
  | { kind: 'arbitrated'; run_id: string; strategy: string; final_action: string; agreement: number; reasoning: string; votes: Record<string, string> }
  | { kind: 'notice'; run_id: string; message: string }
  | { kind: 'producing_artifact'; run_id: string; path: string };

export type OnProgress = (event: ProgressEvent) => void;

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
