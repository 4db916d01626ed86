import path from 'node:path';
import {
  HitlRefusedError,
  type MaestroApp as App,
  type RunOutcome,
  RunNotResumableError,
  STORAGE_WRITE_FAILED,
} from '../compose/use-cases.js';
import { AppError, InternalError, InvalidInputError, RunHeldError, StorageError, storageFailureText } from '../domain/errors.js';
import type { OnProgress } from '../domain/ports.js';
import { describeInvalid } from './invalid-input.js';
import type { Io } from './io.js';
import type { ProgressReporter } from './progress.js';
import { noRun, reportOutcome, type ShownOutcome } from './run-outcome.js';

/** The flags of `run` (and `hitl decide --run`) that shape how a run is executed and reported. */
export interface RunContextFlags {
  readonly json?: boolean;
  readonly follow?: boolean;
  readonly route?: string;
  readonly model?: string;
  readonly record?: string;
  readonly replay?: string;
}

/**
 * Runs one use case with progress on stderr, Ctrl-C (SIGINT, SIGTERM) or a closed stdout (`| head`)
 * wired to an AbortSignal (the run stops at its last checkpoint), and the outcome reported. Shared by
 * `run` and `hitl decide --run`. Every way out prints the run id and, with `--json`, exactly one JSON
 * object: an interrupt (exit 130, with an audit record and the command that resumes it), a refusal or
 * invalid input (2), a failure of the environment (1, one line) and a bug (1, with the stack).
 */
export async function withRunContext(
  io: Io,
  opts: RunContextFlags,
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
  // A reader that goes away (`maestro run --follow | head`) ends the run as an interrupt does: at its last checkpoint.
  let closed = false;
  const onClosed = (error: NodeJS.ErrnoException): void => {
    if (error.code !== 'EPIPE') return;
    closed = true;
    controller.abort(new Error('stdout was closed'));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  io.stdout.on('error', onClosed);
  try {
    app = await (await import('../compose/use-cases.js')).openApp({
      workspace,
      env: io.env,
      ...(opts.route ? { route: opts.route } : {}),
      ...(opts.model ? { model: opts.model } : {}),
      ...(opts.record ? { record: path.resolve(io.cwd, opts.record) } : {}),
      ...(opts.replay ? { replay: path.resolve(io.cwd, opts.replay) } : {}),
      onProgress: routeProgress(opts, reporter, follow),
      signal: controller.signal,
      tracing: { onNotice: (message) => io.stderr.write(`maestro: ${message}\n`) },
    });
    const outcome = await body(app, run);
    reporter.stop();
    follow?.endLine();
    if (report) return await report(app, outcome);
    const orchestration = opts.json ? await app.orchestration(outcome.run_id) : undefined;
    return reportOutcome(io, opts, outcome, orchestration === undefined ? {} : { orchestration });
  } catch (error) {
    reporter.stop();
    follow?.endLine();
    const interrupted = controller.signal.aborted ? { by: closed ? 'stdout_closed' : 'signal' } : undefined;
    const outcome = await failureOutcome({ io, error, app, runId: run.id, interrupted });
    // Whoever read stdout has gone: the person still learns, on stderr, how the run ended and how to resume it.
    return reportOutcome(closed ? { ...io, stdout: io.stderr } : io, opts, outcome);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    io.stdout.off('error', onClosed);
    // A pause's notification has 5 s more to be delivered (and recorded) before the process leaves (the outcome
    // is out already); the run's spans leave before the process does.
    await app?.close();
  }
}

/** Progress on stderr (the spinner, or plain lines); with --follow the transcript on stdout, and notices on stderr whatever the mode. */
function routeProgress(opts: RunContextFlags, reporter: ProgressReporter, follow: { onProgress: OnProgress } | undefined): OnProgress {
  return (event) => {
    if (!follow || event.kind === 'notice') reporter.onProgress(event);
    // With --follow --json a notice is also an event line, for scripts.
    if (follow && (event.kind !== 'notice' || opts.json)) follow.onProgress(event);
  };
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
 * or invalid input (2), a failure of the environment — a full disk, an engine or endpoint that cannot
 * be reached — in one line (1), or a bug, with its stack on stderr for a report (1).
 */
async function failureOutcome(options: {
  io: Io;
  error: unknown;
  app: App | undefined;
  runId: string;
  /** Set when the run was stopped: by a signal, or by stdout's reader going away. */
  interrupted: { by: string } | undefined;
}): Promise<ShownOutcome> {
  const { io, error, app, runId } = options;
  if (options.interrupted) return interruptedOutcome(app, runId, options.interrupted.by);
  if (error instanceof RunNotResumableError || error instanceof HitlRefusedError || error instanceof RunHeldError)
    return noRun('refused', error.message, runId);
  // A broken maestro.config.json (or no workspace, or a --route that is not one): invalid input, exit 2.
  if (error instanceof InvalidInputError) return noRun('invalid', describeInvalid(error));
  const failed = (reason_code: string, message: string): ShownOutcome => ({
    run_id: runId,
    status: 'error',
    reason_code,
    artifact: null,
    audit_log: null,
    message,
  });
  if (error instanceof StorageError)
    return failed(STORAGE_WRITE_FAILED, `storage failed: ${storageFailureText(error)}${runId ? `; run ${runId}` : ''}`);
  if (error instanceof AppError && !(error instanceof InternalError)) return failed(error.code, error.message);
  io.stderr.write(
    `maestro: internal error — this is a bug, please report it with the output below.\n${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return failed('INTERNAL_ERROR', `internal error: ${error instanceof Error ? error.message : String(error)}`);
}

/** The run stopped at its last checkpoint: recorded in its audit log, with the command that resumes it. */
async function interruptedOutcome(app: App | undefined, runId: string, by: string): Promise<ShownOutcome> {
  const { auditLog, steps } = app && runId ? await app.interrupted(runId, by) : { auditLog: null, steps: undefined };
  const message = !runId
    ? 'interrupted before a run started; nothing to resume.'
    : steps !== undefined
      ? `interrupted: the run stopped at its last checkpoint (${steps} model call(s) kept); resume it with: maestro run --resume ${runId}`
      : `interrupted before run ${runId} had a checkpoint; run the command again.`;
  return {
    run_id: runId,
    status: 'interrupted',
    reason_code: 'RUN_INTERRUPTED_AT_CHECKPOINT',
    artifact: null,
    audit_log: auditLog,
    message,
  };
}
