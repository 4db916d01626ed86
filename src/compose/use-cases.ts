import { setTimeout as sleep } from 'node:timers/promises';
import { showRun, type ShownRun } from '../adapters/fs/run-liveness.js';
import { type AskInput, type AskOutcome, askCouncil } from '../app/ask.js';
import { type CommandReview, reviewCommand } from '../app/command-findings.js';
import { type DecideAllInput, type DecideAllResult, decideAll } from '../app/hitl-all.js';
import { EngineLink, isTransientOutage } from '../app/engine-link.js';
import { decidePause, type HitlDecisionInput, type HitlDecisionResult } from '../app/hitl.js';
import { confirmOutcome, type OutcomeInput, type OutcomeResult } from '../app/outcome.js';
import { type CommandInput, processCommand } from '../app/process-command.js';
import type { RunOutcome } from '../app/run-deps.js';
import { settleOutside } from '../app/settle-run.js';
import { checkWorkspace } from '../app/workspace-check.js';
import type { DurabilityVerdict } from '../domain/engine-durability.js';
import { ExitError } from '../domain/errors.js';
import { resetLoopPolicy } from '../domain/loop-policy/workspace-loop.js';
import { decideRun } from '../domain/run/policy.js';
import type { DecisionAuthor, RunState } from '../domain/run-state.js';
import type { WorkspaceConfig } from '../domain/workspace-config.js';
import { type App, type AppOptions, createApp } from './app.js';
import type { Backend } from './backend.js';
import { filesBackend } from './files-backend.js';
import { type PausedList, pausedRuns, type ShowDetails, showDetails } from './hitl-view.js';
import { resumeHere } from './resume.js';
import { type SessionView, sessionView } from './session-view.js';
import type { Service, WatchOptions, WorkerOptions } from './watch.js';

// What the CLI and the console name of the use cases' inputs, results and refusals.
export { ASK_MODE, type AskInput } from '../app/ask.js';
export type { CommandFinding } from '../app/check-command.js';
export { type CommandReview, schemaFinding } from '../app/command-findings.js';
export type { DecideAllResult, DecidedRun } from '../app/hitl-all.js';
export { HitlRefusedError } from '../app/hitl.js';
export { OutcomeRefusedError } from '../app/outcome.js';
export { RunNotResumableError, STORAGE_WRITE_FAILED } from '../app/process-command.js';
export type { RunOutcome } from '../app/run-deps.js';
export { runEval } from '../app/eval-run.js';
export type { AppOptions } from './app.js';
export { doctorWorkspace, type DoctorReport, type RouteReport } from './doctor.js';
export { engineUrlOf, openEngineAdmin, type EngineAdmin } from './engine-admin.js';
export { openEval } from './eval.js';
export type { PausedList, PausedRow, ShowDetails } from './hitl-view.js';
export type { UnreadableCheckpoint } from '../domain/unreadable-checkpoint.js';
export type { Service } from './watch.js';
export {
  type AuditSource,
  auditDigest,
  type ClusterStatus,
  initWorkspace,
  openWorkspace,
  type RouteOutage,
  type RunListing,
  type ScaffoldReport,
  type Workspace,
  type WorkspaceStatus,
  writeFileWhole,
} from './workspace.js';

/**
 * What maestro offers the CLI and the console: its use cases, on files or with an engine (PostgreSQL),
 * chosen once inside. A caller parses, calls one of these, and renders what it returns.
 */
export interface UseCases {
  readonly config: WorkspaceConfig;
  /** The workspace's folder. */
  readonly root: string;
  /** Who takes a continued run up: a running watcher (files), or a free worker of the engine. */
  readonly continuedBy: Backend['continuedBy'];
  /** `the engine at <url without its password>` when the workspace has one (where a worker takes commands from). */
  readonly engineLabel: string | undefined;
  newRunId(): string;
  /** Whether a live process runs the run now (a watcher's claim, `maestro run`, a worker's lease). */
  isHeld(runId: string): Promise<boolean>;
  /** The status a person sees: a run left `running` that nobody holds is `interrupted`, with the command that resumes it. */
  shown(run: Pick<RunState, 'run_id' | 'status' | 'decision'>): Promise<ShownRun>;
  /** Who would take a run continued now up: a live watcher or worker; undefined when none is there. */
  taker(): Promise<Backend['continuedBy'] | undefined>;
  runsBeside: Backend['runsBeside'];
  readBeside: Backend['readBeside'];
  queueStats: Backend['queueStats'];
  /** A command's text, run now in this process. */
  run(command: CommandInput & { readonly runId: string }): Promise<RunOutcome>;
  /** `maestro ask`: one question as the command a file would be. */
  ask(input: AskInput, runId: string): Promise<AskOutcome>;
  /** Resumes a run here (interrupted, or continued by a person), holding it so no other process does too; `by`: who asked. */
  resume(runId: string, by?: DecisionAuthor): Promise<RunOutcome>;
  /** A person's decision on a run's pause; asked under the run's lock whether a live process runs it. */
  decide(input: Omit<HitlDecisionInput, 'isOwned'>): Promise<HitlDecisionResult>;
  /** One decision for every run paused for one reason. */
  decideAll(input: Omit<DecideAllInput, 'isOwned'>): Promise<DecideAllResult>;
  /** The runs paused for a person, and those whose checkpoint cannot be read (any may be paused). */
  paused(): Promise<PausedList>;
  /** What `hitl show` tells of a run; undefined when there is no such run. */
  pauseDetails(runId: string): Promise<{ readonly state: RunState; readonly details: ShowDetails } | undefined>;
  confirmOutcome(input: OutcomeInput): Promise<OutcomeResult>;
  /** What `maestro validate` finds in a command's text, with no model call. */
  review(text: string): Promise<CommandReview>;
  /** What would turn every good command into a rejected one (personas, routes): empty when the workspace can run. */
  problems(): Promise<string[]>;
  /** The run's orchestration result (seed 001), once it was arbitrated; unreadable, it is left out, never invented. */
  orchestration(runId: string): Promise<unknown>;
  /** Records in the log of a run with a checkpoint that it was interrupted (best effort: stopping must not fail). */
  interrupted(runId: string, by: string): Promise<{ readonly auditLog: string | null; readonly steps: number | undefined }>;
  session(): Promise<SessionView>;
  /** A new council session; persona memory archived unless kept. */
  resetSession(keepMemory: boolean): Promise<{ readonly session: string; readonly previous: string; readonly memory: string | undefined }>;
  /** Whether the engine's commits are durable, for a watcher or worker about to start (always on files). */
  durability(allowAsync: boolean): Promise<DurabilityVerdict>;
  /** `maestro watch`: a watcher on files, the intake with an engine. */
  watch(options: WatchOptions): Promise<Service>;
  /** `maestro worker`: takes the engine's commands (a workspace with an engine only). */
  worker(options: WorkerOptions): Promise<Service>;
  /** Lets go: a pause's notification gets 5 s more, traces leave, the engine closes. */
  close(): Promise<void>;
}

/** The app and its use cases (the wiring stays readable for tests; callers use the use cases). */
export type MaestroApp = App & UseCases;

/** Opens the workspace's app (see `createApp`) and the use cases over it. */
export async function openApp(options: AppOptions): Promise<MaestroApp> {
  const app = await createApp(options);
  return { ...app, ...useCases(app, await backendOf(app)) };
}

/** The app's back end: its engine when it has one (whose client is loaded only then), else its files. */
async function backendOf(app: App): Promise<Backend> {
  const engine = app.engine;
  return engine ? (await import('./engine-backend.js')).engineBackend(app, engine) : filesBackend(app);
}

function useCases(app: App, backend: Backend): UseCases {
  const { deps } = app;
  return {
    config: deps.config,
    root: app.paths.root,
    continuedBy: backend.continuedBy,
    engineLabel: app.engine?.label,
    newRunId: () => deps.newRunId(),
    isHeld: (runId) => backend.isHeld(runId),
    shown: (run) => showRun(run, backend),
    runsBeside: (known) => backend.runsBeside(known),
    readBeside: (runId) => backend.readBeside(runId),
    queueStats: () => backend.queueStats(),
    taker: async () => ((await backend.hasTaker()) ? backend.continuedBy : undefined),
    run: (command) => processCommand(command, deps),
    ask: (input, runId) => askCouncil(input, deps, runId),
    resume: (runId, by) => resumeHere(app, backend, runId, by),
    // A run a live process holds or the queue has for a live taker is theirs; one nobody runs may still
    // be stopped. With an engine, a stop's artifact goes to the engine and the intake writes it into its workspace.
    decide: (input) => decidePause({ ...input, isOwned: () => backend.isClaimed(input.runId) }, backend.depsForRun(input.runId)),
    decideAll: (input) =>
      decideAll(
        { ...input, isOwned: (runId) => backend.isClaimed(runId) },
        { runs: deps.ledger, depsFor: (runId) => backend.depsForRun(runId) },
      ),
    paused: () => pausedRuns(app),
    pauseDetails: async (runId) => {
      const state = (await deps.ledger.load(runId)) ?? (await backend.readBeside(runId));
      return state && { state, details: await showDetails({ app, backend, runId, state }) };
    },
    confirmOutcome: (input) => confirmOutcome(input, deps),
    review: (text) => reviewCommand(text, deps),
    problems: () => checkWorkspace(deps),
    orchestration: (runId) => readOrchestration(app, runId),
    interrupted: (runId, by) => recordInterrupt(app, runId, by),
    session: () => sessionView(app),
    resetSession: async (keepMemory) => {
      const now = deps.clock.now().toISOString();
      const session = `S-${deps.newRunId()}`;
      const previous = await deps.loopPolicy.update((data) => ({ data: resetLoopPolicy(data, session, now), result: data.session_id }), {
        replaceCorrupt: true,
      });
      return { session, previous, memory: keepMemory ? undefined : await backend.archiveMemory(previous) };
    },
    durability: (allowAsync) => backend.durability(allowAsync),
    watch: async (options) => (await import('./watch.js')).openWatcher(app, options),
    worker: async (options) => {
      if (!app.engine) throw noEngine('worker');
      return (await import('./watch.js')).openWorker(app, app.engine, options);
    },
    close: async () => {
      await deps.notifier?.settled(5_000);
      await app.telemetry.shutdown();
      await backend.close();
    },
  };
}

/** Refused (exit 2) where only a workspace with an engine will do. */
export function noEngine(what: string): ExitError {
  return new ExitError(
    2,
    `maestro ${what}: this workspace has no engine: set "engine": { "url": "postgres://…" } in maestro.config.json, or MAESTRO_ENGINE_URL`,
  );
}

async function readOrchestration(app: App, runId: string): Promise<unknown> {
  if (!runId) return undefined;
  const text = await app.deps.ledger.readFile(runId, 'orchestration.json').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** By its row of the policy table; the audit log's path when it was recorded, and the steps its checkpoint keeps. */
async function recordInterrupt(app: App, runId: string, by: string): Promise<{ auditLog: string | null; steps: number | undefined }> {
  let auditLog: string | null = null;
  try {
    if (await app.deps.ledger.load(runId)) {
      const end = await settleOutside(runId, app.deps, {
        ending: decideRun({ kind: 'interrupted' }),
        message: `interrupted (${by})`,
        details: { by },
      });
      auditLog = end.unrecorded === undefined ? end.audit_log : null;
    }
  } catch {
    auditLog = null;
  }
  const state = await app.deps.ledger.load(runId).catch(() => undefined);
  return { auditLog, steps: state?.steps.length };
}

/**
 * Starts an intake or a worker whose engine may be away for now (a restart, a failover, a database
 * started after the workers): `open` is tried again with a growing pause while the engine cannot be
 * reached, said once when it is not and once when it is; any other failure (no schema, a wrong
 * setting) ends the start at once.
 */
export async function whenEngineReachable<T>(
  open: () => Promise<T>,
  say: (message: string) => void,
  pauses: { baseMs: number; maxMs: number } = { baseMs: 250, maxMs: 15_000 },
): Promise<T> {
  const link = new EngineLink({ notice: say, meanwhile: 'nothing is taken until it is back', ...pauses });
  for (;;) {
    try {
      const value = await open();
      link.reached();
      return value;
    } catch (error) {
      if (!isTransientOutage(error)) throw error;
      link.lost(error);
      await sleep(link.pause());
    }
  }
}

/**
 * The app a long-running command (`watch`, `worker`) runs on: an engine away at start is waited for,
 * as one that goes away later is, and one that may lose acknowledged commits is refused (exit 2,
 * nothing taken) unless allowed, when it is said loudly. A worker needs an engine. What a refusal
 * opened is let go: its telemetry shut down, its engine closed.
 */
export async function openServiceApp(
  command: 'watch' | 'worker',
  options: AppOptions & { readonly allowAsyncCommit: boolean },
  say: (message: string) => void,
): Promise<MaestroApp> {
  const { allowAsyncCommit, ...appOptions } = options;
  const app = await whenEngineReachable(async () => {
    const opened = await openApp(appOptions);
    const verdict = await opened.durability(allowAsyncCommit).catch(async (error: unknown) => {
      await opened.close();
      throw error;
    });
    if (verdict.kind === 'refused') {
      await opened.close();
      throw new ExitError(2, `maestro ${command}: ${verdict.message} Nothing was taken.`);
    }
    if (verdict.kind === 'allowed') say(verdict.message);
    return opened;
  }, say);
  if (command === 'worker' && !app.engine) {
    await app.close();
    throw noEngine('worker');
  }
  return app;
}
