import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { ensurePrivateDir } from '../adapters/atomic-file.js';
import { pruneAuditLogs } from '../adapters/fs-audit-store.js';
import { FsClaimStore } from '../adapters/fs-claim-store.js';
import { FsCommandInbox } from '../adapters/fs-command-inbox.js';
import { FsWatcherRegistry } from '../adapters/fs-watcher-registry.js';
import { WatchLoop } from '../app/watch-loop.js';
import { checkWorkspace } from '../app/workspace-check.js';
import { checkWorkspaceConfig, resolveWorkspace } from '../config.js';
import { ExitError } from '../domain/errors.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { handleStopSignals, type SignalProcess } from './stop-signals.js';
import { readPackageVersion } from './package-info.js';
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
}

export function registerWatch(program: Command, io: Io, proc: SignalProcess = process): void {
  program
    .command('watch')
    .description('watch commands/ and run each command file dropped there, oldest first, one at a time')
    .option('--once', 'process what is queued (and what a previous watcher left in flight), then exit')
    .option('--json', 'one NDJSON object per state transition on stdout (and per transcript event with --transcript)')
    .option('--transcript', "show each run's council as it works: replies as they arrive, knowledge requests, verdicts, arbitration (screened)")
    .option(...WORKSPACE_OPTION)
    .option('--route <name>', 'use this model route (from maestro.config.json) for every persona while this watcher runs')
    .option('--model <model>', 'use this model on the route in use; on the offline route it means an OpenAI-compatible endpoint ($OPENAI_BASE_URL, $OPENAI_API_KEY)')
    .addHelpText(
      'after',
      [
        '',
        'States: AWAITING_COMMAND → EXECUTING_TASK → PRODUCING_ARTIFACT → AWAITING_COMMAND.',
        'A file is claimed by renaming it into .maestro/inflight/<run_id>.json; it is deleted when its run ends,',
        'kept in .maestro/runs/<run_id>/ when the run pauses for a person, and moved to .maestro/rejected/ with',
        '<name>.error.json when it does not parse or validate. SIGINT/SIGTERM stop at the current checkpoint',
        '(a second signal exits at once); the next start resumes what was in flight.',
      ].join('\n'),
    )
    .action(async (opts: WatchFlags) => {
      const code = await watchSubcommand(opts, io, proc);
      if (code !== 0) throw new ExitError(code);
    });
}

export async function watchSubcommand(opts: WatchFlags, io: Io, proc: SignalProcess): Promise<number> {
  const workspace = resolveWorkspace(opts.workspace, io.env, io.cwd);
  const isFolder = await stat(workspace).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isFolder) throw new ExitError(2, `maestro watch: the workspace ${workspace} is not a folder (create one with "maestro init")`);
  const transcript = opts.transcript === true;
  const reporter = new WatchReporter(io, { output: pickWatchOutput(io, opts.json === true, transcript), transcript });
  const app = await (await import('../compose.js')).createApp({
    workspace,
    env: io.env,
    ...(opts.route ? { route: opts.route } : {}),
    ...(opts.model ? { model: opts.model } : {}),
    ...(transcript ? { onProgress: new TranscriptFeed(reporter.onTranscript).onProgress } : {}),
    tracing: { onNotice: (message) => reporter.notice(message) },
  });
  const { paths } = app;
  // A broken workspace would turn every good command into a rejected one: refuse to start instead.
  const problems = await checkWorkspace(app.deps);
  if (problems.length > 0) {
    await app.telemetry.shutdown();
    throw new ExitError(2, `maestro watch: this workspace cannot run commands; nothing was taken. Fix it and start again:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
  await ensurePrivateDir(paths.state);
  await ensurePrivateDir(paths.decisions);
  const registry = new FsWatcherRegistry(path.join(paths.state, 'watchers'));
  await registry.removeStale();
  const self = FsWatcherRegistry.newIdentity(proc.pid);
  await registry.register({ ...self, started_at: app.deps.clock.now().toISOString(), once: opts.once === true, version: readPackageVersion() });
  if (app.engine) {
    // With an engine this watcher is the intake: workers (`maestro worker`) run the commands.
    const { runIntake } = await import('./intake.js');
    try {
      return await runIntake({ app, engine: app.engine, reporter, registry, self, once: opts.once === true, proc });
    } finally {
      reporter.stop();
      await registry.unregister(self);
    }
  }

  const loop = new WatchLoop({
    deps: app.deps,
    inbox: new FsCommandInbox({ dir: paths.commands, onError: (error) => reporter.notice(`watching commands/ failed: ${error.message}`) }),
    decisions: new FsCommandInbox({ dir: paths.decisions, onError: (error) => reporter.notice(`watching .maestro/decisions/ failed: ${error.message}`) }),
    claims: new FsClaimStore({ paths, self, registry, clock: app.deps.clock }),
    onEvent: reporter.onEvent,
    once: opts.once === true,
    pid: proc.pid,
    workspace: paths.root,
    // The configuration is read once, at start; a file broken since then stops the taking of commands too.
    preflight: async () => [...(await checkWorkspaceConfig(paths.config)), ...(await checkWorkspace(app.deps))],
  });

  // Audit retention: the watcher prunes at start and once a day, like `maestro audit prune`.
  const prune = async (): Promise<void> => {
    const retentionDays = app.deps.config.audit.retention_days;
    await pruneAuditLogs({ paths, retentionDays, now: app.deps.clock.now() }).then(
      (report) => {
        if (report.deleted.length > 0) reporter.notice(`audit retention: deleted the logs of ${report.deleted.length} run(s) last written more than ${retentionDays} day(s) ago`);
        if (report.checkpoints.length > 0) reporter.notice(`audit retention: deleted the checkpoints of ${report.checkpoints.length} run(s) that ended more than ${retentionDays} day(s) ago`);
      },
      (error: unknown) => reporter.notice(`audit retention failed: ${(error as Error).message}`),
    );
  };
  await prune();
  const daily = setInterval(() => void prune(), 24 * 60 * 60 * 1000).unref();

  const disposeSignals = handleStopSignals(proc, {
    onFirst: () => void loop.stop(),
    beforeExit: () => reporter.stop(),
  });
  try {
    try {
      await loop.start();
    } catch (error) {
      await loop.stop();
      throw error;
    }
    await loop.stopped;
    return 0;
  } finally {
    clearInterval(daily);
    disposeSignals();
    reporter.stop();
    await registry.unregister(self);
    await app.telemetry.shutdown();
  }
}
