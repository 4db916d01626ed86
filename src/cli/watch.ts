import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { resolveWorkspace } from '../config.js';
import { ExitError } from '../domain/errors.js';
import { ALLOW_ASYNC_COMMIT_OPTION, serve, type ServiceFlags } from './service.js';
import { CONCURRENCY_OPTION } from './concurrency-option.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import type { SignalProcess } from './stop-signals.js';
import { readPackageVersion } from '../package-info.js';
import { TranscriptFeed } from './transcript-feed.js';
import { pickWatchOutput, WatchReporter } from './watch-reporter.js';

interface WatchFlags extends ServiceFlags {
  readonly transcript?: boolean;
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

/** `maestro watch`: refuses a workspace that is not a folder, then watches until stopped; the exit code. */
export async function watchSubcommand(opts: WatchFlags, io: Io, proc: SignalProcess): Promise<number> {
  const workspace = resolveWorkspace(opts.workspace, io.env, io.cwd);
  await requireFolder(workspace);
  const transcript = opts.transcript === true;
  const reporter = new WatchReporter(io, { output: pickWatchOutput(io, opts.json === true, transcript), transcript });
  return serve(
    'watch',
    { flags: opts, io, proc },
    {
      app: {
        ...(transcript ? { onProgress: new TranscriptFeed(reporter.onTranscript).onProgress } : {}),
        tracing: { onNotice: (message) => reporter.notice(message) },
      },
      open: async (app, common) => {
        const options = {
          ...common,
          version: readPackageVersion(),
          onEvent: reporter.onEvent,
          onNotice: (m: string) => reporter.notice(m),
        };
        const service = await app.watch(options).catch((error: unknown) => {
          reporter.stop();
          throw error;
        });
        return { service, reporter };
      },
    },
  );
}

/** Refuses (exit 2) a workspace that is not a folder. */
async function requireFolder(workspace: string): Promise<void> {
  const isFolder = await stat(workspace).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isFolder) throw new ExitError(2, `maestro watch: the workspace ${workspace} is not a folder (create one with "maestro init")`);
}
