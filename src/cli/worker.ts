import os from 'node:os';
import type { Command } from 'commander';
import { ExitError } from '../domain/errors.js';
import { ALLOW_ASYNC_COMMIT_OPTION, serve, type ServiceFlags } from './service.js';
import { CONCURRENCY_OPTION } from './concurrency-option.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import type { SignalProcess } from './stop-signals.js';
import { pickWatchOutput, WatchReporter } from './watch-reporter.js';

interface WorkerFlags extends ServiceFlags {
  readonly name?: string;
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
  return serve(
    'worker',
    { flags: opts, io, proc },
    {
      open: async (app, common) => {
        const reporter = new WatchReporter(io, { output: pickWatchOutput(io, opts.json === true), takesFrom: app.engineLabel ?? '' });
        const name = opts.name ?? `${os.hostname()}-${proc.pid}`;
        return { service: await app.worker({ ...common, name, onEvent: reporter.onEvent }), reporter };
      },
    },
  );
}
