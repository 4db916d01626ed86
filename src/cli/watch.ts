import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { checkWorkspace } from '../app/workspace-check.js';
import type { App } from '../compose/app.js';
import { openWatcher } from '../compose/watch.js';
import { resolveWorkspace } from '../config.js';
import { ExitError } from '../domain/errors.js';
import { ALLOW_ASYNC_COMMIT_OPTION } from './commit-durability.js';
import { openServiceApp, releaseApp } from './engine-start.js';
import { CONCURRENCY_OPTION } from './concurrency-option.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { handleStopSignals, type SignalProcess } from './stop-signals.js';
import { readPackageVersion } from '../package-info.js';
import { TranscriptFeed } from './transcript-feed.js';
import { pickWatchOutput, WatchReporter } from './watch-reporter.js';

/** The part of `process` the watcher uses for signals, so shutdown can be tested with a fake. */

interface WatchFlags {
  readonly once?: boolean;
  readonly json?: boolean;
  readonly transcript?: boolean;
  readonly workspace?: string;
  readonly route?: string;
  readonly model?: string;
  readonly allowAsyncCommit?: boolean;
  readonly concurrency?: number;
}

export function registerWatch(program: Command, io: Io, proc: SignalProcess = process): void {
  program
    .command('watch')
    .description('watch commands/ and run each command file dropped there, oldest first (one at a time unless --concurrency)')
    .option('--once', 'process what is queued (and what a previous watcher left in flight), then exit')
    .option('--json', 'one NDJSON object per state transition on stdout (and per transcript event with --transcript)')
    .option(
      '--transcript',
      "show each run's council as it works: replies as they arrive, knowledge requests, verdicts, arbitration (screened)",
    )
    .option(...WORKSPACE_OPTION)
    .option(...ALLOW_ASYNC_COMMIT_OPTION)
    .option(...CONCURRENCY_OPTION)
    .option('--route <name>', 'use this model route (from maestro.config.json) for every persona while this watcher runs')
    .option(
      '--model <model>',
      'use this model on the route in use; on the offline route it means an OpenAI-compatible endpoint ($OPENAI_BASE_URL, $OPENAI_API_KEY)',
    )
    .addHelpText(
      'after',
      [
        '',
        'States: AWAITING_COMMAND → EXECUTING_TASK → PRODUCING_ARTIFACT → AWAITING_COMMAND.',
        'A file is claimed by renaming it into .maestro/inflight/<run_id>.json; it is deleted when its run ends,',
        'kept in .maestro/runs/<run_id>/ when the run pauses for a person, and moved to .maestro/rejected/ with',
        '<name>.error.json when it does not parse or validate. SIGINT/SIGTERM stop every run in flight at its',
        'checkpoint (a second signal exits at once); the next start resumes what was in flight. With --concurrency N,',
        "up to N runs go at once; each route's max_concurrency, requests_per_minute and tokens_per_minute hold across them.",
      ].join('\n'),
    )
    .action(async (opts: WatchFlags) => {
      const code = await watchSubcommand(opts, io, proc);
      if (code !== 0) throw new ExitError(code);
    });
}

/** `maestro watch`: opens the workspace's app, refuses a broken workspace, then watches until stopped; the exit code. */
export async function watchSubcommand(opts: WatchFlags, io: Io, proc: SignalProcess): Promise<number> {
  const workspace = resolveWorkspace(opts.workspace, io.env, io.cwd);
  await requireFolder(workspace);
  const transcript = opts.transcript === true;
  const reporter = new WatchReporter(io, { output: pickWatchOutput(io, opts.json === true, transcript), transcript });
  const app = await openWatchApp(workspace, opts, io, reporter);
  await refuseBrokenWorkspace(app);
  const watcher = await openWatcher(app, {
    once: opts.once === true,
    pid: proc.pid,
    version: readPackageVersion(),
    concurrency: opts.concurrency ?? app.deps.config.watch.concurrency,
    onEvent: reporter.onEvent,
    onNotice: (message) => reporter.notice(message),
  }).catch(async (error: unknown) => {
    reporter.stop();
    await releaseApp(app);
    throw error;
  });
  const disposeSignals = handleStopSignals(proc, {
    onFirst: () => void watcher.stop(),
    beforeExit: () => reporter.stop(),
  });
  try {
    await watcher.run();
    return 0;
  } finally {
    disposeSignals();
    reporter.stop();
    await watcher.close();
    await app.telemetry.shutdown();
  }
}

/** Refuses (exit 2) a workspace that is not a folder. */
async function requireFolder(workspace: string): Promise<void> {
  const isFolder = await stat(workspace).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isFolder) throw new ExitError(2, `maestro watch: the workspace ${workspace} is not a folder (create one with "maestro init")`);
}

/** Opens the app the watcher runs on, with its engine durable (or async commit allowed). */
function openWatchApp(workspace: string, opts: WatchFlags, io: Io, reporter: WatchReporter): Promise<App> {
  return openServiceApp(
    'watch',
    {
      workspace,
      env: io.env,
      ...(opts.route ? { route: opts.route } : {}),
      ...(opts.model ? { model: opts.model } : {}),
      ...(opts.transcript === true ? { onProgress: new TranscriptFeed(reporter.onTranscript).onProgress } : {}),
      tracing: { onNotice: (message) => reporter.notice(message) },
      allowAsyncCommit: opts.allowAsyncCommit === true,
    },
    io,
  );
}

/** A broken workspace would turn every good command into a rejected one: refuses to start instead (exit 2). */
async function refuseBrokenWorkspace(app: App): Promise<void> {
  const problems = await checkWorkspace(app.deps);
  if (problems.length > 0) {
    await releaseApp(app);
    throw new ExitError(
      2,
      `maestro watch: this workspace cannot run commands; nothing was taken. Fix it and start again:\n${problems.map((p) => `  ${p}`).join('\n')}`,
    );
  }
}
