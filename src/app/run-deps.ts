import type { WorkspaceConfig } from '../domain/workspace-config.js';
import type { StepContentRecorder } from '../domain/telemetry.js';
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
  PictureRenderer,
  PersonaStore,
  RunHolds,
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
  readonly runs: RunStore & {
    saveFile(runId: string, name: string, content: string): Promise<string>;
    /** A side file's text (the command as given, for a run that goes on), or undefined. */
    loadFile(runId: string, name: string): Promise<string | undefined>;
    removeFile(runId: string, name: string): Promise<void>;
    list(): Promise<string[]>;
  };
  readonly audit: AuditLog;
  /** Marks the runs this process executes, so readers tell a running run from one a killed process left. */
  readonly holds?: RunHolds;
  readonly loopPolicy: LoopPolicyStore;
  /** Message content for traces, when the workspace asks for it (`telemetry.capture_content`); redacted again there. */
  readonly telemetry?: StepContentRecorder;
  /** Draws the pictures some modes add to the artifact (parallel: a heat map). */
  readonly pictures?: PictureRenderer;
  readonly onProgress?: OnProgress;
  readonly signal?: AbortSignal;
}

export type { RunOutcome } from '../domain/run-machine.js';
