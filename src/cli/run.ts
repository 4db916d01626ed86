import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { HitlRefusedError } from '../app/hitl.js';
import { processCommand, RunNotResumableError, STORAGE_WRITE_FAILED } from '../app/process-command.js';
import type { RunOutcome } from '../app/run-deps.js';
import { settleOutside } from '../app/settle-run.js';
import type { App } from '../compose/app.js';
import { resumeHere } from '../compose/resume.js';
import { resolveWorkspace } from '../config.js';
import { ExitError, InvalidInputError, RunHeldError, StorageError } from '../domain/errors.js';
import { decideRun } from '../domain/run/policy.js';
import { screenText } from '../domain/screen.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import type { ProgressReporter } from './progress.js';
import { chalkFor, statusBadge } from './style.js';

export const EXIT_BY_STATUS: Record<RunOutcome['status'], number> = {
  completed: 0,
  error: 1,
  invalid: 2,
  paused: 3,
  stopped: 4,
  guardrail_stopped: 5,
  interrupted: 130,
};

export function registerRun(program: Command, io: Io): void {
  program
    .command('run')
    .description('run one command file now, in the foreground')
    .argument('[command.json]', 'the command file (it is read, never modified or deleted)')
    .option('--resume <run_id>', 'resume an interrupted run, or one a person chose to continue, from its checkpoint')
    .option(
      '--json',
      'print one JSON object {run_id, status, decision, reason_code, artifact, audit_log} on stdout (with --follow: one JSON object per event, the outcome last)',
    )
    .option(
      '--follow',
      'show the council as it works: each reply as it arrives, knowledge requests, verdicts, arbitration (screened like everything kept)',
    )
    .option(...WORKSPACE_OPTION)
    .option('--route <name>', 'use this model route (from maestro.config.json) for every persona, this time only')
    .option(
      '--model <model>',
      'use this model on the route in use; on the offline route it means an OpenAI-compatible endpoint ($OPENAI_BASE_URL, $OPENAI_API_KEY)',
    )
    .option('--record <file>', 'save every model exchange of this run as a cassette (requests digested, replies kept, secrets redacted)')
    .option('--replay <file>', 'answer every model call from a cassette: no network, the same artifact')
    .addHelpText(
      'after',
      '\nExit codes: 0 completed · 1 internal error · 2 invalid input · 3 paused for a person · 4 stopped by policy · 5 stopped by a guardrail · 130 interrupted',
    )
    .action(async (file: string | undefined, opts: RunFlags) => {
      const code = await runSubcommand(file, opts, io);
      if (code !== 0) throw new ExitError(code);
    });
}

interface RunFlags {
  json?: boolean;
  follow?: boolean;
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
  return withRunContext(io, opts, workspace, async (app, run) => {
    if (opts.resume !== undefined) {
      run.id = opts.resume;
      return resumeHere(app, opts.resume);
    }
    run.id = app.deps.newRunId();
    return processCommand({ text, source: path.basename(commandPath), runId: run.id }, app.deps);
  });
}

/**
 * Runs one use case with progress on stderr, Ctrl-C wired to an AbortSignal (the run stops at its
 * last checkpoint), and the outcome reported. Shared by `run` and `hitl decide --run`. Every way out
 * prints the run id and, with `--json`, exactly one JSON object: an interrupt (exit 130, with an
 * audit record and the command that resumes it), a storage failure and an internal error (exit 1).
 */
export async function withRunContext(
  io: Io,
  opts: { json?: boolean; follow?: boolean; route?: string; model?: string; record?: string; replay?: string },
  workspace: string,
  body: (app: App, run: { id: string }) => Promise<RunOutcome>,
  /** How the outcome is shown (`maestro ask` adds its answer); default: the run's outcome, as `run` shows it. */
  report?: (app: App, outcome: RunOutcome) => Promise<number>,
): Promise<number> {
  const { ProgressReporter } = await import('./progress.js');
  // --follow writes the whole story on stdout: the spinner would only draw over it.
  const reporter = new ProgressReporter(io, { quiet: opts.json === true || opts.follow === true });
  const follow = opts.follow ? new (await import('./follow.js')).RunFollow(io, { json: opts.json === true }) : undefined;
  const controller = new AbortController();
  const run = { id: '' };
  let app: App | undefined;
  const onSignal = interruptHandler({ io, controller, reporter, run });
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    app = await (await import('../compose/app.js')).createApp({
      workspace,
      env: io.env,
      ...(opts.route ? { route: opts.route } : {}),
      ...(opts.model ? { model: opts.model } : {}),
      ...(opts.record ? { record: path.resolve(io.cwd, opts.record) } : {}),
      ...(opts.replay ? { replay: path.resolve(io.cwd, opts.replay) } : {}),
      onProgress: follow?.onProgress ?? reporter.onProgress,
      signal: controller.signal,
      tracing: { onNotice: (message) => io.stderr.write(`maestro: ${message}\n`) },
    });
    const outcome = await body(app, run);
    reporter.stop();
    follow?.endLine();
    if (report) return await report(app, outcome);
    const orchestration = opts.json ? await readOrchestration(app, outcome.run_id) : undefined;
    return reportOutcome(io, opts, outcome, orchestration === undefined ? {} : { orchestration });
  } catch (error) {
    reporter.stop();
    follow?.endLine();
    return await reportFailure({ io, opts, error, app, runId: run.id, interrupted: controller.signal.aborted });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    // A pause's notification has 5 s more to be delivered (and recorded) before the process leaves; the outcome is out already.
    await app?.deps.notifier?.settled(5_000);
    // The run's spans leave before the process does (a no-op when tracing is off).
    await app?.telemetry.shutdown();
  }
}

/** SIGINT and SIGTERM: the first stops the run at its last checkpoint; a second leaves at once. */
function interruptHandler(options: {
  io: Io;
  controller: AbortController;
  reporter: Pick<ProgressReporter, 'stop'>;
  run: { readonly id: string };
}): () => void {
  const { io, run } = options;
  let signals = 0;
  // `on`, not `once`: a `once` listener is gone before it runs, and then other SIGINT listeners (the
  // spinner's cursor restorer) see none of ours and kill the process — with no message, no record.
  const onSignal = (): void => {
    signals += 1;
    if (signals === 1) {
      options.controller.abort(new Error('interrupted'));
      return;
    }
    // A second signal leaves at once, by the signal's own default action (as the watcher does).
    options.reporter.stop();
    io.stderr.write(`interrupted again: leaving now${run.id ? `; resume with maestro run --resume ${run.id}` : ''}\n`);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.kill(process.pid, 'SIGINT');
  };
  return onSignal;
}

/**
 * How a run that threw ends for the person: an interrupt (recorded, with how to resume), a refusal
 * (exit 2), an invalid workspace, a storage failure, or an internal error.
 */
async function reportFailure(options: {
  io: Io;
  opts: { json?: boolean; follow?: boolean };
  error: unknown;
  app: App | undefined;
  runId: string;
  interrupted: boolean;
}): Promise<number> {
  const { io, opts, error, app, runId } = options;
  if (options.interrupted) {
    const auditLog = app && runId ? await recordInterrupt(app, runId) : null;
    const state = app && runId ? await app.deps.ledger.load(runId).catch(() => undefined) : undefined;
    const message = !runId
      ? 'interrupted before a run started; nothing to resume.'
      : state
        ? `interrupted: the run stopped at its last checkpoint (${state.steps.length} model call(s) kept); resume it with: maestro run --resume ${runId}`
        : `interrupted before run ${runId} had a checkpoint; run the command again.`;
    return reportEnd(io, opts, { run_id: runId, status: 'interrupted', message, audit_log: auditLog }, 130);
  }
  if (error instanceof RunNotResumableError || error instanceof HitlRefusedError || error instanceof RunHeldError) {
    throw new ExitError(2, `maestro: ${error.message}`);
  }
  // A broken maestro.config.json (or no workspace): still one JSON object with --json, and exit 2.
  if (error instanceof InvalidInputError)
    return reportOutcome(io, opts, invalidOutcome(`${error.file} is invalid:\n${error.issues.map((i) => `  ${i}`).join('\n')}`));
  if (error instanceof StorageError) {
    const message = `storage failed: could not write ${error.path} (${error.errno ?? 'I/O error'})${runId ? `; run ${runId}` : ''}`;
    return reportEnd(io, opts, { run_id: runId, status: 'error', reason_code: STORAGE_WRITE_FAILED, message, audit_log: null }, 1);
  }
  // An internal error: the run id (and with --json the same one object), and the stack on stderr for a report.
  io.stderr.write(
    `maestro: internal error — this is a bug, please report it with the output below.\n${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  const message = `internal error: ${error instanceof Error ? error.message : String(error)}`;
  return reportEnd(io, opts, { run_id: runId, status: 'error', reason_code: 'INTERNAL_ERROR', message, audit_log: null }, 1);
}

/**
 * The run's orchestration result (seed 001), kept beside it once the council was arbitrated; absent
 * for a run that ended before (a gate, an invalid command). Unreadable, it is left out, never invented.
 */
export async function readOrchestration(app: App, runId: string): Promise<unknown> {
  if (!runId) return undefined;
  const text = await app.deps.ledger.readFile(runId, 'orchestration.json').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Records in the log of a run with a checkpoint that a person interrupted it, by its row of the policy table (best effort). */
async function recordInterrupt(app: App, runId: string): Promise<string | null> {
  if (!(await app.deps.ledger.load(runId).catch(() => undefined))) return null;
  const ending = decideRun({ kind: 'interrupted' });
  const end = await settleOutside(runId, app.deps, { ending, message: 'interrupted by a signal', details: { by: 'signal' } });
  return end.unrecorded === undefined ? end.audit_log : null;
}

/** The end of a run that has no outcome of its own (interrupted, failed): one line, or one JSON object. */
function reportEnd(
  io: Io,
  opts: { json?: boolean; follow?: boolean },
  end: { run_id: string; status: 'interrupted' | 'error'; reason_code?: string; message: string; audit_log: string | null },
  code: number,
): number {
  // An error's message may quote what it failed on: printed screened.
  const message = screenText(end.message);
  if (opts.json) {
    const reason = end.reason_code ?? (end.status === 'interrupted' ? 'RUN_INTERRUPTED_AT_CHECKPOINT' : null);
    const line = { ...outcomeKind(opts), run_id: end.run_id || null, status: end.status, decision: null, reason_code: reason };
    io.stdout.write(`${JSON.stringify({ ...line, artifact: null, audit_log: end.audit_log, message })}\n`);
  }
  const c = chalkFor(io, 'stderr');
  io.stderr.write(`${statusBadge(c, end.status)}${end.run_id ? ` ${c.dim(end.run_id)}` : ''} — ${message}\n`);
  return code;
}

function invalidOutcome(message: string): RunOutcome {
  return {
    run_id: '',
    status: 'invalid',
    decision: 'PAUSE_FOR_HITL',
    reason_code: 'SPEC_INVALID_INPUT',
    artifact: null,
    audit_log: '',
    message,
  };
}

/** With `--follow --json` the outcome is the last of the event lines, and says so: `kind: "outcome"`. */
function outcomeKind(opts: { follow?: boolean }): { kind?: 'outcome' } {
  return opts.follow ? { kind: 'outcome' } : {};
}

/** Prints a run's outcome (one JSON object with --json) and returns its exit code. */
export function reportOutcome(
  io: Io,
  opts: { json?: boolean; follow?: boolean },
  raw: RunOutcome,
  extra: { orchestration?: unknown; answer?: string | null } = {},
): number {
  // Outcomes are screened where they are built; one made here (an unreadable file) is screened here.
  const outcome = { ...raw, message: screenText(raw.message) };
  if (opts.json) {
    const { run_id, status, decision, reason_code, artifact, audit_log } = outcome;
    const line = {
      ...outcomeKind(opts),
      run_id: run_id || null,
      status,
      decision,
      reason_code,
      artifact,
      audit_log: audit_log || null,
    };
    io.stdout.write(`${JSON.stringify({ ...line, ...extra })}\n`);
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
