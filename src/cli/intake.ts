import { FsArtifactWriter } from '../adapters/fs-artifact-writer.js';
import { FsClaimStore } from '../adapters/fs-claim-store.js';
import { FsCommandInbox } from '../adapters/fs-command-inbox.js';
import type { FsWatcherRegistry, WatcherIdentity } from '../adapters/fs-watcher-registry.js';
import { PgListener } from '../adapters/pg-listener.js';
import { DONE_CHANNEL } from '../adapters/pg-queue.js';
import { IntakeLoop } from '../app/intake-loop.js';
import type { App } from '../compose.js';
import type { EngineHandle } from '../compose-engine.js';
import { handleStopSignals, type SignalProcess } from './stop-signals.js';
import type { WatchReporter } from './watch-reporter.js';

/**
 * `maestro watch` on a workspace with an engine: the intake. Files dropped into `commands/` go to
 * the engine's queue; `maestro worker`s run them; results come back into this workspace.
 */
export async function runIntake(options: {
  app: App;
  engine: EngineHandle;
  reporter: WatchReporter;
  registry: FsWatcherRegistry;
  self: WatcherIdentity;
  once: boolean;
  proc: SignalProcess;
}): Promise<number> {
  const { app, engine, reporter, proc } = options;
  const { paths } = app;
  const listener = new PgListener(engine.engine, DONE_CHANNEL);
  const loop = new IntakeLoop({
    inbox: new FsCommandInbox({ dir: paths.commands, onError: (error) => reporter.notice(`watching commands/ failed: ${error.message}`) }),
    claims: new FsClaimStore({ paths, self: options.self, registry: options.registry, clock: app.deps.clock }),
    queue: {
      submit: (c) => engine.queue.submit({ ...c, workspaceId: engine.workspaceId }),
      undelivered: () => engine.queue.undelivered(engine.workspaceId),
      markDelivered: (runId, state) => engine.queue.markDelivered(runId, state),
      artifacts: (runId) => engine.queue.artifacts(runId),
      outstanding: () => engine.queue.outstanding(engine.workspaceId),
      waitForDone: (ms) => listener.wait(ms),
    },
    inputs: app.deps.inputs,
    artifacts: new FsArtifactWriter(paths.root, () => app.deps.clock.now()),
    newRunId: app.deps.newRunId,
    onEvent: reporter.onEvent,
    once: options.once,
    pid: proc.pid,
    workspace: paths.root,
  });
  const disposeSignals = handleStopSignals(proc, { onFirst: () => void loop.stop(), beforeExit: () => reporter.stop() });
  try {
    await loop.start();
    await loop.stopped;
    return 0;
  } finally {
    disposeSignals();
    await listener.close();
    await engine.engine.close();
  }
}
