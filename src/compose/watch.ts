import path from 'node:path';
import { ensurePrivateDir } from '../adapters/fs/atomic-file.js';
import { FsArtifactWriter } from '../adapters/fs/artifact-writer.js';
import { pruneAuditLogs } from '../adapters/fs/audit-store.js';
import { FsClaimStore } from '../adapters/fs/claim-store.js';
import { FsCommandInbox } from '../adapters/fs/command-inbox.js';
import { FsRouteWaits } from '../adapters/fs/route-waits.js';
import { FsWatcherRegistry } from '../adapters/fs/watcher-registry.js';
import { IntakeLoop } from '../app/intake-loop.js';
import { WatchLoop } from '../app/watch-loop.js';
import { checkWorkspace } from '../app/workspace-check.js';
import type { App } from './app.js';
import type { EngineHandle } from './engine.js';
import { cachedConfigCheck, readEngineRetryMs, readWatchRecheckMs } from '../config.js';
import { openRouteBreaker } from './route-breaker.js';
import type { WatchEvent } from '../domain/queue.js';

/** A long-running service of the shell (a watcher, an intake, a worker), as the CLI drives it. */
export interface Service {
  /** Starts it and resolves when it has stopped: after `stop()`, or with `once` when the queue is drained. */
  run(): Promise<void>;
  /** Stops taking work; the run in flight stops at its checkpoint. */
  stop(): Promise<void>;
  /** Releases what it holds (its registration, connections). Call once, after `finished`. */
  close(): Promise<void>;
}

export interface WatchOptions {
  readonly once: boolean;
  readonly pid: number;
  readonly version: string;
  /** Runs at once in this process (`--concurrency`, else `watch.concurrency`; default 1). */
  readonly concurrency?: number;
  readonly onEvent: (event: WatchEvent) => void;
  /** One line for people (a watch that failed, what audit retention deleted). */
  readonly onNotice: (message: string) => void;
}

/**
 * `maestro watch`: on files, a watcher that runs every command dropped into `commands/`; with an
 * engine, the intake that hands them to the engine's workers and writes results back. Chosen here,
 * once, from the workspace.
 */
export async function openWatcher(app: App, options: WatchOptions): Promise<Service> {
  const { paths } = app;
  await ensurePrivateDir(paths.state);
  await ensurePrivateDir(paths.decisions);
  const { claims, unregister } = await registerWatcher(app, options);
  const inbox = (dir: string, what: string) =>
    new FsCommandInbox({ dir, onError: (error) => options.onNotice(`watching ${what} failed: ${error.message}`) });
  try {
    if (app.engine)
      return await startIntake(app, app.engine, { ...options, claims, inbox: inbox(paths.commands, 'commands/'), unregister });
    return await startWatchLoop(app, { ...options, claims, inbox, unregister });
  } catch (error) {
    await unregister();
    throw error;
  }
}

/** Registers this watcher (after clearing the registrations of dead ones), and the claims it takes commands with. */
async function registerWatcher(app: App, options: WatchOptions): Promise<{ claims: FsClaimStore; unregister: () => Promise<void> }> {
  const { paths } = app;
  const registry = new FsWatcherRegistry(path.join(paths.state, 'watchers'));
  await registry.removeStale();
  // Several watchers may share a workspace (each command runs once), but a second one is said, not silent.
  // A process resuming one run (run --resume, the console) takes no commands: it is no other watcher.
  const others = (await registry.list()).filter((w) => w.alive && w.resuming === undefined);
  if (others.length > 0)
    options.onNotice(
      `another watcher is running on this workspace (${others.map((w) => `pid ${w.pid} since ${w.started_at}`).join(', ')}): both take commands from commands/, each runs once; stop one with Ctrl-C or kill <pid>`,
    );
  const self = FsWatcherRegistry.newIdentity(options.pid);
  await registry.register({ ...self, started_at: app.deps.clock.now().toISOString(), once: options.once, version: options.version });
  const unregister = () => registry.unregister(self);
  const claims = new FsClaimStore({ paths, self, registry, clock: app.deps.clock });
  return { claims, unregister };
}

/** Without an engine this watcher runs the commands itself, and prunes the audit logs daily while it runs. */
async function startWatchLoop(
  app: App,
  options: WatchOptions & {
    claims: FsClaimStore;
    inbox: (dir: string, what: string) => FsCommandInbox;
    unregister: () => Promise<void>;
  },
): Promise<Service> {
  const { paths } = app;
  const { inbox } = options;
  // Calls waiting for their route's limits, for `maestro status` in another process.
  const waits = new FsRouteWaits(paths.state);
  const configCheck = cachedConfigCheck(paths.config);
  const onProgress = app.deps.onProgress;
  const loop = new WatchLoop({
    deps: {
      ...app.deps,
      onProgress: (event) => {
        onProgress?.(event);
        waits.onProgress(event);
      },
    },
    inbox: inbox(paths.commands, 'commands/'),
    decisions: inbox(paths.decisions, '.maestro/decisions/'),
    claims: options.claims,
    onEvent: (event) => {
      if (event.kind === 'finished') waits.clear(event.run_id);
      options.onEvent(event);
    },
    once: options.once,
    pid: options.pid,
    workspace: paths.root,
    concurrency: options.concurrency ?? app.deps.config.watch.concurrency,
    // The configuration is read once, at start; a file broken since then stops the taking of commands too
    // (looked at before every claim, read again only when it changed).
    preflight: async () => [...(await configCheck()), ...(await checkWorkspace(app.deps))],
    preflightRetryMs: readWatchRecheckMs(app.env),
    routeGate: openRouteBreaker(app, {
      pid: options.pid,
      onNotice: (runId, message) => options.onEvent({ kind: 'notice', run_id: runId, message }),
    }),
  });
  const stopPruning = await pruneDaily(app, options.onNotice);
  return {
    run: async () => {
      try {
        await loop.start();
      } catch (error) {
        await loop.stop();
        throw error;
      }
      await loop.stopped;
    },
    stop: () => loop.stop(),
    close: async () => {
      stopPruning();
      await waits.flushed();
      await options.unregister();
    },
  };
}

/** Audit retention: the watcher prunes at start and once a day, like `maestro audit prune`. */
async function pruneDaily(app: App, onNotice: (message: string) => void): Promise<() => void> {
  const prune = async (): Promise<void> => {
    const retentionDays = app.deps.config.audit.retention_days;
    await pruneAuditLogs({ paths: app.paths, retentionDays, now: app.deps.clock.now() }).then(
      (report) => {
        if (report.deleted.length > 0)
          onNotice(
            `audit retention: deleted the logs of ${report.deleted.length} run(s) last written more than ${retentionDays} day(s) ago`,
          );
        if (report.checkpoints.length > 0)
          onNotice(
            `audit retention: deleted the checkpoints of ${report.checkpoints.length} run(s) that ended more than ${retentionDays} day(s) ago`,
          );
      },
      (error: unknown) => onNotice(`audit retention failed: ${(error as Error).message}`),
    );
  };
  await prune();
  const daily = setInterval(() => void prune(), 24 * 60 * 60 * 1000).unref();
  return () => clearInterval(daily);
}

/**
 * With an engine this watcher is the intake: files dropped into `commands/` go to the engine's
 * queue; `maestro worker`s run them; results come back into this workspace.
 */
async function startIntake(
  app: App,
  engine: EngineHandle,
  options: WatchOptions & { claims: FsClaimStore; inbox: FsCommandInbox; unregister: () => Promise<void> },
): Promise<Service> {
  const { paths } = app;
  const { PgListener } = await import('../adapters/pg/listener.js');
  const { DONE_CHANNEL } = await import('../adapters/pg/queue.js');
  const listener = new PgListener(engine.engine, DONE_CHANNEL);
  const loop = new IntakeLoop({
    inbox: options.inbox,
    claims: options.claims,
    queue: {
      submit: (c) => engine.queue.submit({ ...c, workspaceId: engine.workspaceId, floorAccept: app.deps.config.floor.accept }),
      undelivered: () => engine.queue.undelivered(engine.workspaceId),
      markDelivered: (runId, state) => engine.queue.markDelivered(runId, state),
      artifacts: (runId) => engine.queue.artifacts(runId),
      outstanding: () => engine.queue.outstanding(engine.workspaceId),
      onDone: (wake) => listener.listen(wake),
      known: (runIds) => engine.queue.known(runIds),
    },
    inputs: app.deps.inputs,
    artifacts: new FsArtifactWriter(paths.root, () => app.deps.clock.now()),
    newRunId: app.deps.newRunId,
    onEvent: options.onEvent,
    once: options.once,
    pid: options.pid,
    workspace: paths.root,
    ...engineRetry(app, (ms) => ({ pollMs: ms })),
  });
  return {
    run: async () => {
      await loop.start();
      await loop.stopped;
    },
    stop: () => loop.stop(),
    close: async () => {
      await listener.close();
      await engine.engine.close();
      await options.unregister();
    },
  };
}

export interface WorkerOptions {
  readonly once: boolean;
  readonly pid: number;
  /** This worker's name in `maestro status`. */
  readonly name: string;
  readonly onEvent: (event: WatchEvent) => void;
  /** Runs at once in this worker (`--concurrency`, else `watch.concurrency`; default 1). */
  readonly concurrency?: number;
}

/** `maestro worker`: takes commands from the workspace's engine and runs them, up to `concurrency` at a time. */
export async function openWorker(app: App, engine: EngineHandle, options: WorkerOptions): Promise<Service> {
  const { PgWorkerSession } = await import('../adapters/pg/queue.js');
  type Session = import('../adapters/pg/queue.js').PgWorkerSession;
  type Claim = import('../adapters/pg/queue.js').EngineClaim;
  const { WorkerLoop } = await import('../app/worker-loop.js');
  const { workerClaimDeps } = await import('./engine.js');
  const loop = new WorkerLoop<Claim, Session>({
    openSession: () => PgWorkerSession.open(engine.engine, { name: options.name }),
    depsFor: (claim, session, controls) =>
      workerClaimDeps({ base: app.deps, engine: engine.engine, root: app.paths.root, claim, session, controls }),
    onEvent: options.onEvent,
    once: options.once,
    pid: options.pid,
    workspace: app.paths.root,
    routeGate: openRouteBreaker(app, {
      pid: options.pid,
      onNotice: (runId, message) => options.onEvent({ kind: 'notice', run_id: runId, message }),
    }),
    concurrency: options.concurrency ?? app.deps.config.watch.concurrency,
    ...engineRetry(app, (ms) => ({ reconnectMs: ms })),
  });
  return { run: () => loop.run(), stop: () => loop.stop(), close: () => engine.engine.close() };
}

/** The loop's timings from `MAESTRO_ENGINE_RETRY_MS` (a testing knob); none when unset, so the loop's defaults hold. */
function engineRetry<T extends object>(app: App, timings: (ms: number) => T): Partial<T> {
  const ms = readEngineRetryMs(app.env);
  return ms === undefined ? {} : timings(ms);
}
