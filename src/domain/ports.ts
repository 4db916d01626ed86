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
