import { sha256 } from '../../src/adapters/system/hashing.js';
import { executeRun } from '../../src/app/execute-run.js';
import type { ModelRoutes } from '../../src/app/routed-llm.js';
import { startedRun, type RunDeps, type RunOutcome } from '../../src/app/run-deps.js';
import { parseCommandText } from '../../src/domain/command-file.js';
import type { Persona } from '../../src/domain/persona.js';
import type { LlmClient, ProgressEvent, StartedRun } from '../../src/domain/ports.js';
import type { ResolvedRoute } from '../../src/domain/route.js';
import { RUN_STATE_VERSION, type RunState } from '../../src/domain/run-state.js';
import { DEFAULT_WORKSPACE_CONFIG, type WorkspaceConfig } from '../../src/domain/workspace-config.js';
import { FakeClock } from './fake-clock.js';
import { InMemoryDecisionInbox, InMemoryRunHolds } from './in-memory-inbox.js';
import { InMemoryRunLedger } from './in-memory-run-ledger.js';
import { InMemoryLoopPolicyStore, InMemoryPersonaStore, InMemorySessionStore, InMemoryWorkspace, triad } from './in-memory-stores.js';

export interface MemoryAppOptions {
  /** One client for every persona (most tests); without it, `routes` decide. */
  readonly llm?: LlmClient;
  /** Model routes by id, each with its client (a REROUTE test). */
  readonly routes?: Readonly<Record<string, { readonly route: Partial<ResolvedRoute>; readonly client: LlmClient }>>;
  /** The workspace's files (inputs and knowledge), by workspace-relative path. */
  readonly files?: Readonly<Record<string, string>>;
  readonly personas?: Persona[];
  /** Sections of the workspace config to replace (each section whole, from the defaults). */
  readonly config?: (defaults: WorkspaceConfig) => WorkspaceConfig;
  readonly clock?: FakeClock;
  readonly signal?: AbortSignal;
}

/** The app's use cases wired to in-memory fakes: no disk, no network, no process. */
export interface MemoryApp {
  readonly deps: RunDeps & { readonly decisions: InMemoryDecisionInbox; readonly holds: InMemoryRunHolds };
  readonly ledger: InMemoryRunLedger;
  readonly sessions: InMemorySessionStore;
  readonly loopPolicy: InMemoryLoopPolicyStore;
  readonly personas: InMemoryPersonaStore;
  readonly workspace: InMemoryWorkspace;
  readonly decisions: InMemoryDecisionInbox;
  readonly clock: FakeClock;
  /** Every progress event the run reported. */
  readonly progress: ProgressEvent[];
}

/** Builds the app as `createApp` does, from in-memory fakes (run ids `run-1`, `run-2`, …). */
export function memoryApp(options: MemoryAppOptions = {}): MemoryApp {
  const clock = options.clock ?? new FakeClock('2026-01-01T00:00:00.000Z');
  const config = options.config ? options.config(DEFAULT_WORKSPACE_CONFIG) : DEFAULT_WORKSPACE_CONFIG;
  const ledger = new InMemoryRunLedger(clock);
  const sessions = new InMemorySessionStore(clock, config.history.keep_runs);
  const loopPolicy = new InMemoryLoopPolicyStore(clock);
  const personas = new InMemoryPersonaStore(options.personas ?? triad());
  const workspace = new InMemoryWorkspace(options.files, { maxFileBytes: config.knowledge.max_file_bytes, sha256 });
  const decisions = new InMemoryDecisionInbox();
  const progress: ProgressEvent[] = [];
  let next = 0;
  const deps: MemoryApp['deps'] = {
    config,
    clock,
    newRunId: () => `run-${++next}`,
    sha256,
    models: fakeRoutes(options.routes ?? {}),
    ...(options.llm ? { llm: options.llm } : {}),
    personas,
    sessions,
    knowledge: workspace,
    inputs: workspace,
    artifacts: workspace,
    ledger,
    loopPolicy,
    decisions,
    holds: new InMemoryRunHolds(),
    onProgress: (event) => progress.push(event),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  return { deps, ledger, sessions, loopPolicy, personas, workspace, decisions, clock, progress };
}

/** Model routes from a table: a persona's `route` names one (default `main`); each route has its own client. */
export function fakeRoutes(
  routes: Readonly<Record<string, { readonly route: Partial<ResolvedRoute>; readonly client: LlmClient }>>,
): ModelRoutes {
  const resolved = (id: string): ResolvedRoute | undefined => {
    const entry = routes[id];
    if (!entry) return undefined;
    return {
      provider: 'openai',
      model: `${id}-model`,
      timeout_ms: 60_000,
      max_retries: 0,
      privileges: ['READ_FILE', 'QUERY_CORTEX'],
      json_mode: 'json_schema',
      stream: false,
      locality: 'remote',
      ...entry.route,
      id,
    };
  };
  return {
    routeIdFor: (persona) => persona.route ?? 'main',
    resolve: (id) => resolved(id) ?? { error: `maestro.config.json: no route named "${id}"` },
    clientFor: (route) => {
      const entry = routes[route.id];
      if (!entry) throw new Error(`no client for route ${route.id}`);
      return entry.client;
    },
  };
}

/** A command file's JSON: a task, with `config` and the rest as given. */
export const aCommand = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  task_description: 'Review the plan',
  config: { max_rounds: 1 },
  ...overrides,
});

/** The state a run starts with (as `processCommand` makes it), from a command file's JSON. */
export function aRunState(app: Pick<MemoryApp, 'clock' | 'deps'>, command: Record<string, unknown>, runId: string): RunState {
  const parsed = parseCommandText(JSON.stringify(command));
  if (!parsed.ok) throw new Error(`not a valid command: ${parsed.issues.join('; ')}`);
  const now = app.clock.now().toISOString();
  return {
    schemaVersion: RUN_STATE_VERSION,
    run_id: runId,
    status: 'running',
    created_at: now,
    updated_at: now,
    source: `${runId}.json`,
    task_sha256: app.deps.sha256(parsed.value.task_description),
    command: parsed.value,
    steps: [],
    trail: [],
    reroutes: [],
    hitl: [],
  };
}

/** A run started in the app's ledger from a command, opened for a use case. */
export async function startRun(
  app: MemoryApp,
  command: Record<string, unknown> = aCommand(),
  runId = app.deps.newRunId(),
): Promise<StartedRun> {
  const run = await app.ledger.open(runId);
  await run.commit({ start: aRunState(app, command, runId), files: [{ name: 'command.json', content: JSON.stringify(command) }] });
  return startedRun(run);
}

/** The same run opened again, as a later process (a resume) opens it. */
export async function reopen(app: MemoryApp, runId: string): Promise<StartedRun> {
  return startedRun(await app.ledger.open(runId));
}

/** executeRun on a started run, with the command its checkpoint keeps (as given: these tests screen nothing out of it). */
export function execute(run: StartedRun, deps: RunDeps): Promise<RunOutcome> {
  return executeRun(run, deps, run.state.command);
}
