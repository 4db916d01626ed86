import os from 'node:os';
import type { Command } from 'commander';
import { checkWorkspace } from '../app/workspace-check.js';
import { openWorker } from '../compose/watch.js';
import { resolveWorkspace } from '../config.js';
import { ExitError } from '../domain/errors.js';
import { ALLOW_ASYNC_COMMIT_OPTION } from './commit-durability.js';
import { openServiceApp, releaseApp } from './engine-start.js';
import { CONCURRENCY_OPTION } from './concurrency-option.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { handleStopSignals, type SignalProcess } from './stop-signals.js';
import { pickWatchOutput, WatchReporter } from './watch-reporter.js';

interface WorkerFlags {
  readonly once?: boolean;
  readonly json?: boolean;
  readonly workspace?: string;
  readonly route?: string;
  readonly model?: string;
  readonly name?: string;
  readonly allowAsyncCommit?: boolean;
  readonly concurrency?: number;
}

export function registerWorker(program: Command, io: Io, proc: SignalProcess = process): void {
  program
    .command('worker')
    .description(
      "take commands from the workspace's engine (PostgreSQL) and run them (one at a time unless --concurrency); run one on every machine that should work",
    )
    .option('--once', 'run what is queued, then exit')
    .option('--json', 'one NDJSON object per state transition on stdout')
    .option('--name <name>', 'this worker\'s name in "maestro status" (default: host name and pid)')
    .option(...WORKSPACE_OPTION)
    .option(...ALLOW_ASYNC_COMMIT_OPTION)
    .option(...CONCURRENCY_OPTION)
    .option('--route <name>', 'use this model route (from maestro.config.json) for every persona while this worker runs')
    .option('--model <model>', 'use this model on the route in use')
    .addHelpText(
      'after',
      [
        '',
        "The workspace here is this machine's copy: its personas, config and knowledge roots at the same",
        "relative paths as the intake's (`maestro watch` with the same engine). A command whose input files",
        "differ here from the intake's copy (content hash) pauses with the reason. Artifacts are kept in the",
        "engine and written into the intake's workspace. SIGINT/SIGTERM stop every run in flight at its checkpoint",
        'and hand each back to the queue; a worker that dies (even kill -9) loses nothing: its runs are resumed',
        'by the next free workers from their checkpoints.',
      ].join('\n'),
    )
    .action(async (opts: WorkerFlags) => {
      const code = await workerSubcommand(opts, io, proc);
      if (code !== 0) throw new ExitError(code);
    });
}

export async function workerSubcommand(opts: WorkerFlags, io: Io, proc: SignalProcess): Promise<number> {
  const workspace = resolveWorkspace(opts.workspace, io.env, io.cwd);
  const app = await openServiceApp(
    'worker',
    {
      workspace,
      env: io.env,
      ...(opts.route ? { route: opts.route } : {}),
      ...(opts.model ? { model: opts.model } : {}),
      allowAsyncCommit: opts.allowAsyncCommit === true,
    },
    io,
  );
  const handle = app.engine;
  if (!handle) {
    await releaseApp(app);
    throw new ExitError(
      2,
      'maestro worker: this workspace has no engine: set "engine": { "url": "postgres://…" } in maestro.config.json, or MAESTRO_ENGINE_URL',
    );
  }
  const problems = await checkWorkspace(app.deps);
  if (problems.length > 0) {
    await releaseApp(app);
    throw new ExitError(
      2,
      `maestro worker: this workspace cannot run commands; nothing was taken. Fix it and start again:\n${problems.map((p) => `  ${p}`).join('\n')}`,
    );
  }
  const { redactUrl } = await import('../compose/engine.js');
  const takesFrom = `the engine at ${redactUrl(handle.engine.url)}`;
  const reporter = new WatchReporter(io, { output: pickWatchOutput(io, opts.json === true), takesFrom });
  const name = opts.name ?? `${os.hostname()}-${proc.pid}`;
  const concurrency = opts.concurrency ?? app.deps.config.watch.concurrency;
  const worker = await openWorker(app, handle, { once: opts.once === true, pid: proc.pid, name, onEvent: reporter.onEvent, concurrency });
  const disposeSignals = handleStopSignals(proc, { onFirst: () => void worker.stop(), beforeExit: () => reporter.stop() });
  try {
    await worker.run();
    return 0;
  } finally {
    disposeSignals();
    reporter.stop();
    await worker.close();
  }
}
