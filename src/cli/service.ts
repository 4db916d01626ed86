import type { AppOptions, MaestroApp, Service } from '../compose/use-cases.js';
import { resolveWorkspace } from '../config.js';
import { ExitError } from '../domain/errors.js';
import type { Io } from './io.js';
import { handleStopSignals, type SignalProcess } from './stop-signals.js';
import type { WatchReporter } from './watch-reporter.js';

/** The `--allow-async-commit` flag of `maestro watch` and `maestro worker`. */
export const ALLOW_ASYNC_COMMIT_OPTION = [
  '--allow-async-commit',
  'run even if the engine has synchronous_commit = off (a database crash may then lose or repeat commands): warns instead of refusing',
] as const;

/** The flags `maestro watch` and `maestro worker` share. */
export interface ServiceFlags {
  readonly once?: boolean;
  readonly json?: boolean;
  readonly workspace?: string;
  readonly route?: string;
  readonly model?: string;
  readonly allowAsyncCommit?: boolean;
  readonly concurrency?: number;
}

/** What `watch` and `worker` do differently: their output, extra app options, and the service they open. */
export interface ServiceSetup {
  readonly app?: Pick<AppOptions, 'onProgress' | 'tracing'>;
  open(
    app: MaestroApp,
    common: { once: boolean; pid: number; concurrency: number },
  ): Promise<{ service: Service; reporter: WatchReporter }>;
}

/**
 * `maestro watch` and `maestro worker`: opens the workspace's app (an engine away at start is waited
 * for; see `openServiceApp`), refuses a broken workspace, which would turn every good command into a
 * rejected one (exit 2, nothing taken), then serves until stopped by a signal; the exit code.
 */
export async function serve(
  command: 'watch' | 'worker',
  run: { flags: ServiceFlags; io: Io; proc: SignalProcess },
  setup: ServiceSetup,
): Promise<number> {
  const { flags, io, proc } = run;
  const { openServiceApp } = await import('../compose/use-cases.js');
  const app = await openServiceApp(
    command,
    {
      workspace: resolveWorkspace(flags.workspace, io.env, io.cwd),
      env: io.env,
      ...(flags.route ? { route: flags.route } : {}),
      ...(flags.model ? { model: flags.model } : {}),
      ...setup.app,
      allowAsyncCommit: flags.allowAsyncCommit === true,
    },
    (message) => io.stderr.write(`maestro ${command}: ${message}\n`),
  );
  const problems = await app.problems();
  if (problems.length > 0) {
    await app.close();
    throw new ExitError(
      2,
      `maestro ${command}: this workspace cannot run commands; nothing was taken. Fix it and start again:\n${problems.map((p) => `  ${p}`).join('\n')}`,
    );
  }
  const common = { once: flags.once === true, pid: proc.pid, concurrency: flags.concurrency ?? app.config.watch.concurrency };
  const { service, reporter } = await setup.open(app, common).catch(async (error: unknown) => {
    await app.close();
    throw error;
  });
  const disposeSignals = handleStopSignals(proc, { onFirst: () => void service.stop(), beforeExit: () => reporter.stop() });
  try {
    await service.run();
    return 0;
  } finally {
    disposeSignals();
    reporter.stop();
    await service.close();
    await app.close();
  }
}
