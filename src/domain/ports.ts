import type { AuditEvent } from './audit.js';
import type { LoopPolicyData } from './loop-policy/workspace-loop.js';
import type { Persona } from './persona.js';
import type { JsonMode } from './route.js';
import type { KnowledgeResult, RunState } from './run-state.js';
import type { HistoryMessage, SessionState } from './session-state.js';

/** A chat message as our own type; SDK types never leave their adapter. */
export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

export interface LlmRequest {
  readonly persona: string;
  readonly purpose: 'turn' | 'verdict' | 'synthesis' | 'plan' | 'classify';
  readonly round: number;
  readonly messages: readonly ChatMessage[];
  /** The reply must be one JSON object (verdicts). */
  readonly json?: boolean;
  /** The JSON Schema of that object, for endpoints that take one (`json_mode: json_schema`). */
  readonly jsonSchema?: { readonly name: string; readonly schema: Record<string, unknown> };
}

/** Something a call did that belongs on the record (category-level, no content). */
export type LlmNotice = { readonly kind: 'json_mode_fallback'; readonly route: string; readonly from: JsonMode; readonly to: JsonMode; readonly status: number };

export interface LlmReply {
  readonly content: string;
  /** Route/model that produced it, as shown in artifacts. */
  readonly model: string;
  readonly usage?: { prompt_tokens: number; completion_tokens: number };
  readonly notices?: readonly LlmNotice[];
}

/** The one interface every model sits behind. */
export interface LlmClient {
  /** Label for artifacts and summaries (e.g. `offline (rehearsal)`). */
  readonly label: string;
  /** True when replies are not a real model's (the offline rehearsal model). */
  readonly rehearsal: boolean;
  complete(request: LlmRequest, signal?: AbortSignal): Promise<LlmReply>;
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

export interface RunStore {
  save(state: RunState): Promise<void>;
  load(runId: string): Promise<RunState | undefined>;
}

export interface AuditSink {
  /** Appends one record and flushes it before resolving. Returns the log's path. */
  append(event: AuditEvent): Promise<void>;
  /** Whether the log already holds a record of this event (written before this sink was opened, or by it). */
  hasRecorded?(event: string): boolean;
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

/** Progress for people watching: the spinner or plain lines. */
export type ProgressEvent =
  | { kind: 'run_started'; run_id: string; personas: string[]; rounds: number }
  | { kind: 'step_started'; run_id: string; step: 'turn' | 'verdict' | 'synthesis'; persona: string; round: number; rounds: number }
  | { kind: 'knowledge'; run_id: string; persona: string; action: string; status: string }
  | { kind: 'notice'; run_id: string; message: string }
  | { kind: 'producing_artifact'; run_id: string; path: string };

export type OnProgress = (event: ProgressEvent) => void;

/** The workspace's loop policy (`.maestro/loop-policy.json`), updated under a lock. */
export interface LoopPolicyStore {
  read(): Promise<LoopPolicyData>;
  /** Applies `fn` to the current data and saves what it returns, atomically and exclusively. */
  update<T>(fn: (data: LoopPolicyData) => { data: LoopPolicyData; result: T }): Promise<T>;
}
