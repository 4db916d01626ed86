import { InvalidInputError } from '../domain/errors.js';
import type { DecideDeps } from '../app/hitl.js';
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { FsArtifactWriter } from '../adapters/fs/artifact-writer.js';
import { FsKnowledgeBase } from '../adapters/fs/knowledge-base.js';
import { FsPersonaStore } from '../adapters/fs/persona-store.js';
import { FsRunHolds } from '../adapters/fs/run-holds.js';
import { FsRunLedger } from '../adapters/fs/run-ledger.js';
import { FsRunStore } from '../adapters/fs/run-store.js';
import { FsSessionStore } from '../adapters/fs/session-store.js';
import { sha256 } from '../adapters/system/hashing.js';
import { FsDecisionInbox } from '../adapters/fs/decision-inbox.js';
import { FsLoopPolicyStore } from '../adapters/fs/loop-policy-store.js';
import { JsonlAuditLog } from '../adapters/fs/jsonl-audit-log.js';
import { ConfiguredModelRoutes } from '../adapters/model/model-routes.js';
import { delayOfflineRoutes } from '../adapters/model/delayed-llm-client.js';
import { readCassette, RecordingLlmClient, ReplayLlmClient } from '../adapters/model/cassette.js';
import { recordingMemory, replayedMemory } from '../adapters/model/cassette-memory.js';
import { OpenAiLlmClient } from '../adapters/model/openai-llm-client.js';
import { newRunId, systemClock } from '../adapters/system/system-clock.js';
import { NO_TELEMETRY, startTelemetry, type Telemetry } from '../adapters/otel/telemetry.js';
import { countTokens } from '../adapters/model/token-counter.js';
import { WorkspacePaths } from '../adapters/fs/workspace-paths.js';
import { assertWorkspace } from '../adapters/fs/workspace-guard.js';
import { readPackageVersion } from '../package-info.js';
import { loadWorkspaceConfig, readOfflineDelayMs, resolveEngineUrl } from '../config.js';
import type { EngineHandle } from './engine.js';
import type { Clock, LlmClient, OnProgress } from '../domain/ports.js';
import type { WorkspaceConfig } from '../domain/workspace-config.js';
import { WebhookNotifier } from '../adapters/http/webhook-notifier.js';

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
  /**
   * Trace the runs of this process when the workspace (`telemetry`) or the environment
   * (`OTEL_EXPORTER_OTLP_ENDPOINT`) names an OTLP endpoint; the caller then owns `telemetry.shutdown()`.
   */
  readonly tracing?: { readonly onNotice: (message: string) => void };
}

export interface App {
  readonly paths: WorkspacePaths;
  readonly deps: DecideDeps & { readonly telemetry: Telemetry };
  /** Traces of this process (a no-op unless `tracing` was asked for and configured); shut it down when done. */
  readonly telemetry: Telemetry;
  /**
   * Set when the workspace has an engine (`engine.url` or `MAESTRO_ENGINE_URL`): then the queue,
   * checkpoints, decisions, persona memory, loop policy and audit log in `deps` live in PostgreSQL.
   */
  readonly engine?: EngineHandle;
  /** The environment the routes read their keys from (probes and `maestro doctor` call the routes too). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Tokens of a text (o200k): `maestro session show` counts what a memory holds that its saves did not. */
  readonly countTokens: (text: string) => number;
}

/** The composition root: the only place that knows every layer. Tests pass their own clock or model. */
export async function createApp(options: AppOptions): Promise<App> {
  const paths = new WorkspacePaths(options.workspace);
  await assertWorkspace(paths);
  const config = await loadWorkspaceConfig(paths.config);
  const clock = options.clock ?? systemClock;
  const env = options.env ?? {};
  const telemetry = await openTelemetry(options, { config, env, clock });
  const knowledge = new FsKnowledgeBase({
    root: paths.root,
    roots: config.knowledge.roots,
    deny: config.knowledge.deny,
    maxFileBytes: config.knowledge.max_file_bytes,
    sha256,
  });
  const engineUrl = resolveEngineUrl(config, options.env ?? {});
  // Loaded only with an engine, so a workspace on files never loads the PostgreSQL client.
  const wiring = engineUrl
    ? await import('./engine.js').then(async (m) => m.engineDeps({ engine: await m.openEngine(engineUrl), clock, config, paths }))
    : undefined;
  const replay = options.replay
    ? { file: path.resolve(options.replay), cassette: await readCassette(path.resolve(options.replay)) }
    : undefined;
  const recorded = new Map<string, unknown>();
  const deps: App['deps'] = {
    decisions: new FsDecisionInbox(paths),
    config,
    clock,
    newRunId: () => newRunId(clock),
    sha256,
    models: modelRoutes(options, { config, env, root: paths.root }),
    ...(options.llm ? { llm: options.llm } : {}),
    ...(replay ? { llm: new ReplayLlmClient({ sha256, cassette: replay.cassette, file: replay.file }) } : {}),
    ...(options.record ? { wrapLlm: recordingTo(path.resolve(options.record), recorded) } : {}),
    personas: new FsPersonaStore(paths.personas),
    sessions: sessionStore(paths, clock, config),
    knowledge,
    inputs: knowledge,
    artifacts: new FsArtifactWriter(paths.root, () => clock.now()),
    ledger: new FsRunLedger({ paths, store: new FsRunStore(paths), audit: telemetry.wrapAuditLog(new JsonlAuditLog(paths, clock)), clock }),
    // With an engine, held there (replaced by its stores below).
    holds: new FsRunHolds(paths, { clock }),
    telemetry,
    loopPolicy: new FsLoopPolicyStore(paths, clock, () => `S-${newRunId(clock)}`),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(config.notify.webhook_url ? { notifier: webhookNotifier(config, options, () => deps) } : {}),
    ...wiring?.stores,
  };
  // A cassette carries the persona memory its run was recorded with; a replay reads that, not the workspace's.
  const sessions = replay
    ? replayedMemory(deps.sessions, replay.cassette.memory)
    : options.record
      ? recordingMemory(deps.sessions, recorded)
      : deps.sessions;
  const all = { ...deps, sessions };
  return { paths, deps: all, telemetry, env, countTokens, ...(wiring ? { engine: wiring.handle(all) } : {}) };
}

/** The traces of this process when `tracing` was asked for (and the workspace or environment names an endpoint). */
async function openTelemetry(
  options: AppOptions,
  { config, env, clock }: { config: WorkspaceConfig; env: Readonly<Record<string, string | undefined>>; clock: Clock },
): Promise<Telemetry> {
  return options.tracing
    ? await startTelemetry({ config, env, clock, sha256, serviceVersion: readPackageVersion(), onNotice: options.tracing.onNotice })
    : NO_TELEMETRY;
}

/** The configured model routes, with `--route`/`--model` applied and the offline route's test delay. */
function modelRoutes(
  options: AppOptions,
  { config, env, root }: { config: WorkspaceConfig; env: Readonly<Record<string, string | undefined>>; root: string },
): App['deps']['models'] {
  const routes = new ConfiguredModelRoutes({
    config,
    env,
    hasFile: (relative) =>
      lstat(path.join(root, relative)).then(
        () => true,
        () => false,
      ),
    ...(options.route ? { overrideRoute: options.route } : {}),
    ...(options.model ? { overrideModel: options.model } : {}),
    createOpenAi: (route, apiKey) => new OpenAiLlmClient({ route, apiKey }),
  });
  // `--route` and `--model` are this invocation's own: a route they leave unusable is a usage error, before any run starts.
  if (options.route || options.model) {
    const resolved = routes.resolve(options.route ?? config.default_route);
    if ('error' in resolved) throw new InvalidInputError(options.route ? '--route' : '--model', [resolved.error]);
  }
  return delayOfflineRoutes(routes, readOfflineDelayMs(options.env));
}

/** Persona memory on files, kept within the history's run count and token budget. */
function sessionStore(paths: WorkspacePaths, clock: Clock, config: WorkspaceConfig): FsSessionStore {
  return new FsSessionStore(paths.sessionStates, clock, config.history.keep_runs, {
    budget: config.history.max_tokens,
    count: countTokens,
  });
}

/** `--record FILE`: every model exchange of the run, saved as a cassette with the persona memory it read. */
function recordingTo(file: string, memory: ReadonlyMap<string, unknown>): (inner: LlmClient) => LlmClient {
  return (inner) => new RecordingLlmClient(inner, { file, sha256, memory });
}

/** The webhook of `notify`: each delivery's outcome is recorded in its run's audit log, holding the run (never while another process does). */
function webhookNotifier(config: WorkspaceConfig, options: AppOptions, deps: () => App['deps']): WebhookNotifier {
  return new WebhookNotifier({
    url: config.notify.webhook_url ?? '',
    format: config.notify.format,
    attempts: config.notify.attempts,
    consoleUrl: config.ui.url,
    onProblem: (message) => options.tracing?.onNotice(message),
    record: async (runId, event) => {
      const hold = await deps().holds.hold(runId, { waitMs: 10_000 });
      try {
        const run = await deps().ledger.open(runId);
        try {
          await run.commit({ records: [event] });
        } finally {
          await run.close();
        }
      } finally {
        await hold.release();
      }
    },
  });
}
