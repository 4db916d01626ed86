import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { HitlRefusedError } from '../app/hitl.js';
import { findClaim } from '../adapters/inflight-claims.js';
import { processCommand, resumeRun, RunNotResumableError } from '../app/process-command.js';
import type { RunOutcome } from '../app/run-deps.js';
import type { App } from '../compose.js';
import { resolveWorkspace } from '../config.js';
import { ExitError, InvalidInputError } from '../domain/errors.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { chalkFor, statusBadge } from './style.js';

const EXIT_BY_STATUS: Record<RunOutcome['status'], number> = { completed: 0, error: 1, invalid: 2, paused: 3, stopped: 4 };

export function registerRun(program: Command, io: Io): void {
  program
    .command('run')
    .description('run one command file now, in the foreground')
    .argument('[command.json]', 'the command file (it is read, never modified or deleted)')
    .option('--resume <run_id>', 'resume an interrupted run, or one a person chose to continue, from its checkpoint')
    .option('--json', 'print one JSON object {run_id, status, decision, reason_code, artifact, audit_log} on stdout')
    .option(...WORKSPACE_OPTION)
    .option('--route <name>', 'use this model route (from maestro.config.json) for every persona, this time only')
    .option('--model <model>', 'use this model on the route in use; on the offline route it means an OpenAI-compatible endpoint ($OPENAI_BASE_URL, $OPENAI_API_KEY)')
    .option('--record <file>', 'save every model exchange of this run as a cassette (requests digested, replies kept, secrets redacted)')
    .option('--replay <file>', 'answer every model call from a cassette: no network, the same artifact')
    .addHelpText(
      'after',
      '\nExit codes: 0 completed · 1 internal error · 2 invalid input · 3 paused for a person · 4 stopped by policy · 130 interrupted',
    )
    .action(async (file: string | undefined, opts: RunFlags) => {
      const code = await runSubcommand(file, opts, io);
      if (code !== 0) throw new ExitError(code);
    });
}

interface RunFlags {
  json?: boolean;
  record?: string;
  replay?: string;
  resume?: string;
  workspace?: string;
  route?: string;
  model?: string;
}

async function runSubcommand(file: string | undefined, opts: RunFlags, io: Io): Promise<number> {
  if ((file === undefined) === (opts.resume === undefined)) {
    throw new ExitError(2, 'maestro run: give either a command file or --resume <run_id>');
  }
  const workspace = resolveWorkspace(opts.workspace, io.env, io.cwd);
  let text = '';
  const commandPath = file === undefined ? '' : path.resolve(io.cwd, file);
  // A file in the drop folder belongs to the watcher: running it here as well would run it twice.
  if (file !== undefined && path.dirname(commandPath) === path.join(workspace, 'commands')) {
    throw new ExitError(
      2,
      `maestro run: ${file} is in the drop folder that \`maestro watch\` serves, so a watcher would run it again.\n` +
        'Process the folder with `maestro watch --once`, or run a copy kept outside commands/.',
    );
  }
  if (file !== undefined) {
    try {
      text = await readFile(commandPath, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a folder' : (error as Error).message;
      return reportOutcome(io, opts, invalidOutcome(`cannot read ${file}: ${reason}`));
    }
  }
  return withRunContext(io, opts, workspace, async (app) => {
    if (opts.resume !== undefined) {
      const claim = await findClaim(app.paths.inflight, opts.resume);
      if (claim) {
        throw new RunNotResumableError(
          `run ${opts.resume} is claimed by a watcher (pid ${claim.owner?.pid ?? 'unknown'}, .maestro/inflight/): that watcher finishes it, or the next "maestro watch" recovers it`,
        );
      }
      // A `continue` decision waiting in the inbox is claimed first, so a watcher cannot resume it too.
      await app.deps.decisions.claim(opts.resume);
      return resumeRun(opts.resume, app.deps);
    }
    return processCommand({ text, source: path.basename(commandPath) }, app.deps);
  });
}

/**
 * Runs one use case with progress on stderr, Ctrl-C wired to an AbortSignal (the run stops at its
 * last checkpoint), and the outcome reported. Shared by `run` and `hitl decide --run`.
 */
export async function withRunContext(
  io: Io,
  opts: { json?: boolean; route?: string; model?: string; record?: string; replay?: string },
  workspace: string,
  body: (app: App) => Promise<RunOutcome>,
): Promise<number> {
  const { ProgressReporter } = await import('./progress.js');
  const reporter = new ProgressReporter(io, { quiet: opts.json === true });
  const controller = new AbortController();
  const onSignal = (): void => controller.abort(new Error('interrupted'));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const app = await (await import('../compose.js')).createApp({
      workspace,
      env: io.env,
      ...(opts.route ? { route: opts.route } : {}),
      ...(opts.model ? { model: opts.model } : {}),
      ...(opts.record ? { record: path.resolve(io.cwd, opts.record) } : {}),
      ...(opts.replay ? { replay: path.resolve(io.cwd, opts.replay) } : {}),
      onProgress: reporter.onProgress,
      signal: controller.signal,
    });
    const outcome = await body(app);
    reporter.stop();
    return reportOutcome(io, opts, outcome);
  } catch (error) {
    reporter.stop();
    if (controller.signal.aborted) {
      io.stderr.write('interrupted: the run stopped at its last checkpoint (.maestro/runs/); resume it with maestro run --resume <run_id>.\n');
      return 130;
    }
    if (error instanceof RunNotResumableError || error instanceof HitlRefusedError) throw new ExitError(2, `maestro: ${error.message}`);
    // A broken maestro.config.json: still one JSON object with --json, and exit 2.
    if (error instanceof InvalidInputError) return reportOutcome(io, opts, invalidOutcome(`${error.file} is invalid:\n${error.issues.map((i) => `  ${i}`).join('\n')}`));
    throw error;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

function invalidOutcome(message: string): RunOutcome {
  return { run_id: '', status: 'invalid', decision: 'PAUSE_FOR_HITL', reason_code: 'SPEC_INVALID_INPUT', artifact: null, audit_log: '', message };
}

/** Prints a run's outcome (one JSON object with --json) and returns its exit code. */
export function reportOutcome(io: Io, opts: { json?: boolean }, outcome: RunOutcome): number {
  if (opts.json) {
    const { run_id, status, decision, reason_code, artifact, audit_log } = outcome;
    io.stdout.write(`${JSON.stringify({ run_id: run_id || null, status, decision, reason_code, artifact, audit_log: audit_log || null })}\n`);
    if (outcome.status !== 'completed') io.stderr.write(`${outcome.message}\n`);
    return EXIT_BY_STATUS[outcome.status];
  }
  const c = chalkFor(io);
  const badge = statusBadge(c, outcome.status);
  const out = outcome.status === 'completed' ? io.stdout : io.stderr;
  out.write(`${badge}${outcome.run_id ? ` ${c.dim(outcome.run_id)}` : ''} — ${outcome.message}\n`);
  if (outcome.artifact) io.stdout.write(`artifact:  ${outcome.artifact}\n`);
  if (outcome.audit_log) io.stdout.write(`audit log: ${outcome.audit_log}\n`);
  return EXIT_BY_STATUS[outcome.status];
}
