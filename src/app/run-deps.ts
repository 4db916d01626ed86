import type { WorkspaceConfig } from '../domain/workspace-config.js';
import type { ModelRoutes } from './routed-llm.js';
import type {
  ArtifactWriter,
  AuditLog,
  Clock,
  InputReader,
  KnowledgeBase,
  LlmClient,
  LoopPolicyStore,
  OnProgress,
  PersonaStore,
  RunStore,
  SessionStore,
} from '../domain/ports.js';

/** Everything a run needs, wired once in `compose.ts` (tests wire fakes). */
export interface RunDeps {
  readonly config: WorkspaceConfig;
  readonly clock: Clock;
  readonly newRunId: () => string;
  readonly sha256: (data: string | Uint8Array) => string;
  readonly countTokens: (text: string) => number;
  /** Routes and their clients (offline, openai) from the workspace config and the invocation's flags. */
  readonly models: ModelRoutes;
  /** One client for every persona instead of routes (a replayed cassette, or a test's fake). */
  readonly llm?: LlmClient;
  /** Wraps whatever client the run uses (e.g. `--record`). */
  readonly wrapLlm?: (llm: LlmClient) => LlmClient;
  readonly personas: PersonaStore;
  readonly sessions: SessionStore;
  readonly knowledge: KnowledgeBase;
  readonly inputs: InputReader;
  readonly artifacts: ArtifactWriter;
  readonly runs: RunStore & { saveFile(runId: string, name: string, content: string): Promise<string>; removeFile(runId: string, name: string): Promise<void>; list(): Promise<string[]> };
  readonly audit: AuditLog;
  readonly loopPolicy: LoopPolicyStore;
  readonly onProgress?: OnProgress;
  readonly signal?: AbortSignal;
}

/** What `maestro run --json` prints and what the watcher logs. */
export interface RunOutcome {
  readonly run_id: string;
  readonly status: 'completed' | 'paused' | 'stopped' | 'invalid' | 'error';
  readonly decision: string;
  readonly reason_code: string;
  /** Absolute path of the artifact, when one was written. */
  readonly artifact: string | null;
  readonly audit_log: string;
  /** One or more lines for people: what happened and what to do next. */
  readonly message: string;
  /** Validation problems as `path: message`, for invalid input. */
  readonly issues?: readonly string[];
}
