import type { PauseNotifier } from '../domain/pause-notice.js';
import type { DecisionAuthor, RunState } from '../domain/run-state.js';
import type { WorkspaceConfig } from '../domain/workspace-config.js';
import type { StepContentRecorder } from '../domain/telemetry.js';
import type { ModelRoutes } from './routed-llm.js';
import { InternalError } from '../domain/errors.js';
import type {
  ArtifactWriter,
  Clock,
  InputReader,
  KnowledgeBase,
  LlmClient,
  LoopPolicyStore,
  OnProgress,
  OpenRun,
  PersonaStore,
  RunHolds,
  RunLedger,
  SessionStore,
  StartedRun,
} from '../domain/ports.js';

/** Everything a run needs, wired once in `compose.ts` (tests wire fakes). */
export interface RunDeps {
  readonly config: WorkspaceConfig;
  readonly clock: Clock;
  readonly newRunId: () => string;
  readonly sha256: (data: string | Uint8Array) => string;
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
  /** Every run's state, audit log and files: a run is opened, then changed only by commits. */
  readonly ledger: RunLedger;
  /** Marks the runs this process executes, so readers tell a running run from one a killed process left. */
  readonly holds?: RunHolds;
  readonly loopPolicy: LoopPolicyStore;
  /** Message content for traces, when the workspace asks for it (`telemetry.capture_content`); redacted again there. */
  readonly telemetry?: StepContentRecorder;
  readonly onProgress?: OnProgress;
  /** Tells people a run waits for one (`notify.webhook_url`); beside the run, never in its way. */
  readonly notifier?: PauseNotifier;
  readonly signal?: AbortSignal;
  /** The person who asked for this resume (from the CLI or the console): named on its RUN_RESUMED record. */
  readonly resumedBy?: DecisionAuthor;
}

export type { RunOutcome } from '../domain/run-machine.js';

/** The run as one that has a state (it was started, or loaded): a run without one here is a bug. */
export function startedRun(run: OpenRun): StartedRun {
  if (run.state === undefined) throw new InternalError(`run ${run.runId} has no state to go on from`);
  return run as StartedRun;
}

/** The run's state, or undefined when it has none or its checkpoint could not be read (best-effort recording). */
export function readableState(run: OpenRun): RunState | undefined {
  try {
    return run.state;
  } catch {
    return undefined;
  }
}
