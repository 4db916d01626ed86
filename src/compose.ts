import type { DecisionInbox } from './app/hitl.js';
import { access } from 'node:fs/promises';
import path from 'node:path';
import type { RunDeps } from './app/run-deps.js';
import { FsArtifactWriter } from './adapters/fs-artifact-writer.js';
import { FsKnowledgeBase } from './adapters/fs-knowledge-base.js';
import { FsPersonaStore } from './adapters/fs-persona-store.js';
import { FsRunStore } from './adapters/fs-run-store.js';
import { FsSessionStore } from './adapters/fs-session-store.js';
import { sha256 } from './adapters/hashing.js';
import { FsDecisionInbox } from './adapters/fs-decision-inbox.js';
import { FsLoopPolicyStore } from './adapters/fs-loop-policy-store.js';
import { JsonlAuditLog } from './adapters/jsonl-audit-log.js';
import { ConfiguredModelRoutes } from './adapters/model-routes.js';
import { delayOfflineRoutes } from './adapters/delayed-llm-client.js';
import { RecordingLlmClient, ReplayLlmClient } from './adapters/cassette.js';
import { OpenAiLlmClient } from './adapters/openai-llm-client.js';
import { newRunId, systemClock } from './adapters/system-clock.js';
import { countTokens, countTokensIfLoaded } from './adapters/token-counter.js';
import { WorkspacePaths } from './adapters/workspace-paths.js';
import { VegaPictureRenderer } from './adapters/vega-pictures.js';
import { loadWorkspaceConfig, readOfflineDelayMs } from './config.js';
import { InvalidInputError } from './domain/errors.js';
import type { Clock, LlmClient, OnProgress } from './domain/ports.js';

export interface AppOptions {
  readonly workspace: string;
  /** Environment for model routes (OPENAI_BASE_URL, the API key variables). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** `--route`: every persona uses this route for this invocation. */
  readonly route?: string;
  /** `--model`: the model of the route in use for this invocation. */
  readonly model?: string;
  readonly clock?: Clock;
  /** One client for every persona instead of routes (tests). */
  readonly llm?: LlmClient;
  /** `--record FILE`: save every model exchange of the run as a cassette. */
  readonly record?: string;
  /** `--replay FILE`: answer every model call from a cassette, with no network. */
  readonly replay?: string;
  readonly onProgress?: OnProgress;
  readonly signal?: AbortSignal;
}

export interface App {
  readonly paths: WorkspacePaths;
  readonly deps: RunDeps & { readonly decisions: DecisionInbox };
}

/** The composition root: the only place that knows every layer. Tests pass their own clock or model. */
export async function createApp(options: AppOptions): Promise<App> {
  const paths = new WorkspacePaths(options.workspace);
  await assertWorkspace(paths);
  const config = await loadWorkspaceConfig(paths.config);
  const clock = options.clock ?? systemClock;
  const knowledge = new FsKnowledgeBase({
    root: paths.root,
    roots: config.knowledge.roots,
    deny: config.knowledge.deny,
    maxFileBytes: config.knowledge.max_file_bytes,
    sha256,
  });
  const deps: App['deps'] = {
    decisions: new FsDecisionInbox(paths),
    config,
    clock,
    newRunId: () => newRunId(clock),
    sha256,
    countTokens,
    models: delayOfflineRoutes(
      new ConfiguredModelRoutes({
        config,
        env: options.env ?? {},
        ...(options.route ? { overrideRoute: options.route } : {}),
        ...(options.model ? { overrideModel: options.model } : {}),
        createOpenAi: (route, apiKey) => new OpenAiLlmClient({ route, apiKey }),
      }),
      readOfflineDelayMs(options.env),
    ),
    ...(options.llm ? { llm: options.llm } : {}),
    ...(options.replay ? { llm: await ReplayLlmClient.open(path.resolve(options.replay), { sha256 }) } : {}),
    ...(options.record ? { wrapLlm: (inner: LlmClient) => new RecordingLlmClient(inner, { file: path.resolve(options.record!), sha256 }) } : {}),
    personas: new FsPersonaStore(paths.personas),
    sessions: new FsSessionStore(paths.sessionStates, clock, config.history.keep_runs, { budget: config.history.max_tokens, count: countTokens, countIfCheap: countTokensIfLoaded }),
    knowledge,
    inputs: knowledge,
    artifacts: new FsArtifactWriter(paths.root, () => clock.now()),
    runs: new FsRunStore(paths),
    audit: new JsonlAuditLog(paths, clock),
    loopPolicy: new FsLoopPolicyStore(paths, clock, () => `S-${newRunId(clock)}`),
    pictures: new VegaPictureRenderer(),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  return { paths, deps };
}

/**
 * A folder is a workspace when it has a `maestro.config.json`, `personas/` or `commands/`. Anything
 * else is refused before a `.maestro/` is made in it: running in the wrong folder is a typo, not a wish.
 */
async function assertWorkspace(paths: WorkspacePaths): Promise<void> {
  const has = async (p: string): Promise<boolean> => access(p).then(() => true, () => false);
  if ((await has(paths.config)) || (await has(paths.personas)) || (await has(paths.commands))) return;
  const exists = await has(paths.root);
  throw new InvalidInputError(paths.root, [
    exists
      ? `not a maestro workspace: it has no maestro.config.json, personas/ or commands/. Create one with "maestro init ${paths.root}", or point at one with --workspace DIR (or $MAESTRO_WORKSPACE)`
      : `no such folder. Create a workspace there with "maestro init ${paths.root}", or point at one with --workspace DIR (or $MAESTRO_WORKSPACE)`,
  ]);
}
